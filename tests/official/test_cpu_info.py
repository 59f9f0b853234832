"""official.benchmark.cpu_info: the CPU and its native reduced precisions."""

from official.benchmark import cpu_info

_AMX = """processor\t: 0
model name\t: Intel(R) Xeon(R) Platinum 8488C
flags\t\t: fpu avx2 avx512f avx512_bf16 amx_bf16 amx_tile avx512_fp16 amx_int8

processor\t: 1
model name\t: Intel(R) Xeon(R) Platinum 8488C
flags\t\t: fpu avx2 avx512f avx512_bf16 amx_bf16 amx_tile avx512_fp16 amx_int8
"""
_AVX2 = """processor\t: 0
model name\t: AMD EPYC
flags\t\t: fpu avx avx2 fma f16c
"""


def test_reads_model_and_native_precisions(tmp_path):
  path = tmp_path / "cpuinfo"
  path.write_text(_AMX)
  cpu = cpu_info.read(str(path))
  assert cpu.model == "Intel(R) Xeon(R) Platinum 8488C"
  assert cpu.bf16 and cpu.fp16
  assert cpu.native("mixed_bfloat16") and cpu.native("mixed_float16")
  assert cpu.int8
  assert cpu.to_dict()["reduced_precision_flags"] == [
      "amx_bf16",
      "amx_int8",
      "avx512_bf16",
      "avx512_fp16",
  ]
  assert "bfloat16: yes (avx512_bf16, amx_bf16)" in cpu.describe()
  assert "int8: yes (amx_int8)" in cpu.describe()


def test_avx2_has_no_native_reduced_precision(tmp_path):
  path = tmp_path / "cpuinfo"
  path.write_text(_AVX2)
  cpu = cpu_info.read(str(path))
  assert cpu.model == "AMD EPYC"
  assert not cpu.bf16 and not cpu.fp16  # f16c converts, it does not multiply
  assert not cpu.int8
  assert cpu.native("float32") and not cpu.native("mixed_bfloat16")
  assert "bfloat16: no (avx512_bf16 / amx_bf16 absent)" in cpu.describe()


def test_unreadable_cpuinfo_still_names_a_cpu(tmp_path):
  cpu = cpu_info.read(str(tmp_path / "missing"))
  assert cpu.model and not cpu.bf16 and cpu.logical_cpus >= 1
