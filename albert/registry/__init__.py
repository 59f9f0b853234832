"""Released models by name, and the cache that makes them model directories.

Modules:
  catalog     the registry: models.json (packaged) and $ALBERT_TF2_REGISTRY,
              each name's sources (the original release's tarball, the
              transformers repository, the TF Hub / Kaggle handle)
  fetch       fetch(NAME | hf://OWNER/REPO[@REV] | PATH): download (resumed,
              verified, one process per name), unpack, convert once, cache;
              resolve(), a flag's value as a model directory

Command line: albert-fetch (python -m albert.fetch); docs/models.md.
"""
