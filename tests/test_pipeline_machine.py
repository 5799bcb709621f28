"""The machine description that lineage cards and dossiers carry (repro.pipeline.machine)."""

from repro.pipeline.machine import describe, summary

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
model name\t: AMD EPYC 9R14
flags\t\t: fpu sse4_2 avx avx2 avx512f avx512bw
processor\t: 1
model name\t: AMD EPYC 9R14
flags\t\t: fpu sse4_2 avx avx2 avx512f avx512bw
"""


def test_describe_reads_the_model_and_the_widest_vector_extension(tmp_path):
    path = tmp_path / "cpuinfo"
    path.write_text(CPUINFO)
    machine = describe(path)
    assert machine["cpu"] == "AMD EPYC 9R14" and machine["vector"] == "avx512f"
    path.write_text(CPUINFO.replace(" avx512f avx512bw", ""))
    assert describe(path)["vector"] == "avx2"
    assert summary(describe(path)).startswith("AMD EPYC 9R14 (avx2), ")


def test_describe_without_cpuinfo_says_unknown(tmp_path):
    machine = describe(tmp_path / "missing")
    assert machine["cpu"] == "unknown" and machine["vector"] == "unknown" and machine["cores"] >= 1
