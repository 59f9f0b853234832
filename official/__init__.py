"""Generic model-garden infrastructure: layers, optimizers, schedules, strategies.

Nothing in this package imports `albert`.
"""
