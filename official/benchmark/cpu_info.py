"""The CPU a benchmark ran on and the reduced precisions it has natively.

bfloat16 matrix products run natively with AVX-512 BF16 or AMX-BF16; float16
ones with AVX-512 FP16 or AMX-FP16. Without them frameworks emulate the type
(docs/performance.md: PyTorch's bfloat16 product at 0.9 GFLOP/s on an AVX2
CPU), so every published figure names the CPU and this support. int8
products (onnxruntime's and TFLite's quantised ones) have dot-product
instructions with VNNI (AVX-512 or AVX) or AMX-INT8, and widen to 16 bits
without them.
"""

import dataclasses
import os
import platform
from typing import FrozenSet, Optional


BF16_FLAGS = ("avx512_bf16", "amx_bf16")
FP16_FLAGS = ("avx512_fp16", "amx_fp16")
INT8_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8")


@dataclasses.dataclass(frozen=True)
class CpuInfo:
  """model: the CPU's name; flags: its feature flags (empty if unknown)."""

  model: str
  flags: FrozenSet[str]
  logical_cpus: int

  @property
  def bf16(self) -> bool:
    """Native bfloat16 matrix products (AVX-512 BF16 or AMX-BF16)."""
    return any(f in self.flags for f in BF16_FLAGS)

  @property
  def fp16(self) -> bool:
    """Native float16 matrix products (AVX-512 FP16 or AMX-FP16)."""
    return any(f in self.flags for f in FP16_FLAGS)

  @property
  def int8(self) -> bool:
    """int8 dot-product instructions (VNNI or AMX-INT8)."""
    return any(f in self.flags for f in INT8_FLAGS)

  def native(self, precision: str) -> bool:
    """Whether `precision` (a Keras policy name) computes natively here."""
    if "bfloat16" in precision:
      return self.bf16
    if "float16" in precision:
      return self.fp16
    return True

  def describe(self) -> str:
    """'AMD EPYC, 2 logical CPUs, bf16: no (...), fp16: no (...)'."""

    def support(names):
      found = [f for f in names if f in self.flags]
      return (
          f"yes ({', '.join(found)})"
          if found
          else f"no ({' / '.join(names)} absent)"
      )

    return (
        f"{self.model}, {self.logical_cpus} logical CPUs, bfloat16: "
        f"{support(BF16_FLAGS)}, float16: {support(FP16_FLAGS)}, int8: "
        f"{support(INT8_FLAGS)}"
    )

  def to_dict(self):
    return {
        "model": self.model,
        "logical_cpus": self.logical_cpus,
        "bf16": self.bf16,
        "fp16": self.fp16,
        "int8": self.int8,
        "reduced_precision_flags": sorted(
            f for f in self.flags if f in BF16_FLAGS + FP16_FLAGS + INT8_FLAGS
        ),
    }


def read(cpuinfo_path: str = "/proc/cpuinfo") -> CpuInfo:
  """This machine's CPU (from /proc/cpuinfo on Linux, else `platform`)."""
  model: Optional[str] = None
  flags: FrozenSet[str] = frozenset()
  try:
    with open(cpuinfo_path, encoding="utf-8", errors="replace") as f:
      for line in f:
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and model is None:
          model = value.strip()
        elif key == "flags" and not flags:
          flags = frozenset(value.split())
        if model is not None and flags:
          break
  except OSError:
    pass
  return CpuInfo(
      model=model or platform.processor() or "unknown CPU",
      flags=flags,
      logical_cpus=os.cpu_count() or 1,
  )
