import subprocess
import sys

from fairdecide.cli import main


def test_demo_synthetic(capsys):
    assert main(["demo", "--synthetic"]) == 0
    out = capsys.readouterr().out
    assert "Synthetic bail problem" in out
    for row in ("unconstrained", "independence <= 0.05", "separation <= 0.05"):
        assert row in out
    assert "verified" in out and " no" not in out.split("verified")[1].split("Loss")[0]


def test_demo_on_compas(data_dir, capsys):
    assert main(["demo", "--data-home", str(data_dir), "--epsilon", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "COMPAS" in out and "independence <= 0.1" in out


def test_demo_falls_back_without_data(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("FAIRDECIDE_DATA", raising=False)
    assert main(["demo", "--data-home", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "COMPAS not found locally" in out and "Synthetic bail problem" in out


def test_bad_epsilon_is_a_clean_error(capsys):
    assert main(["demo", "--synthetic", "--epsilon", "-1"]) == 2
    assert "epsilon must be >= 0" in capsys.readouterr().err


def test_python_dash_m():
    out = subprocess.run([sys.executable, "-m", "fairdecide", "demo", "--synthetic"],
                         capture_output=True, text=True, check=True).stdout
    assert "unconstrained" in out
