import contextlib
import gzip
import io
import os
import subprocess
import sys

import numpy as np
import pytest

import fairdecide
from fairdecide.cli import main
from fairdecide.datasets import make_tabular_problem
from fairdecide.demo import DemoCase, policy_table, solve_policies


@pytest.fixture(scope="module")
def synthetic_demo():
    """``fairdecide demo --synthetic``: its exit status and output, run once for the tests
    that read it (each run of the demo takes about a second)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("FAIRDECIDE_DATA", raising=False)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = main(["demo", "--synthetic"])
        return status, out.getvalue()


@pytest.fixture
def synthetic_report(synthetic_demo):
    """The synthetic demo's output."""
    return synthetic_demo[1]


def test_demo_synthetic(synthetic_demo):
    status, out = synthetic_demo
    assert status == 0
    assert "Synthetic bail problem" in out
    for row in ("unconstrained", "independence <= 0.05", "separation <= 0.05"):
        assert row in out
    table = out.split("verified")[1].split("status:")[0]
    assert " no" not in table and table.count("yes") == 4


def test_demo_explains_itself(synthetic_report):
    out = synthetic_report
    # The groups and cells are named by their labels.
    assert "group A (60% of people), group B (40% of people)" in out
    assert "risk 0, risk 1, risk 2, risk 3, risk 4" in out
    # What the utility and each deviation mean, and that deviations can exceed 1.
    assert "U(a, y) = a - y" in out and "expected value per" in out
    for line in ("independence  t = action,  no c", "separation    t = action,  c = outcome",
                 "sufficiency   t = outcome, c = action"):
        assert line in out
    assert "sum of absolute differences" in out and "can exceed 1" in out
    assert "..." not in out  # no truncated table


def test_demo_prints_the_fair_policy(synthetic_report):
    out = synthetic_report
    assert "Decisions of the policy 'separation <= 0.05'" in out
    table = out.split("Decisions of the policy")[1].splitlines()
    header = next(line for line in table if line.split()[:1] == ["share"])
    assert header.split() == ["share", "P(release)", "unconstrained"] * 2
    rows = {line.split()[0] + " " + line.split()[1]: line.split()[2:]
            for line in table if line.startswith("risk ") and "level" not in line}
    assert sorted(rows) == [f"risk {i}" for i in range(5)]
    # The printed probabilities are the optimised policy's, and the unconstrained
    # optimum releases the lowest risk level and detains the highest in both groups.
    from fairdecide.demo import bail_case

    case = bail_case()
    runs = solve_policies(case)
    release = runs["separation <= 0.05"].policy.table[:, :, 1]
    for i in range(5):
        share_a, p_a, _, share_b, p_b, _ = rows[f"risk {i}"]
        assert float(p_a) == pytest.approx(release[i, 0], abs=0.006)
        assert float(p_b) == pytest.approx(release[i, 1], abs=0.006)
        assert float(share_a) == pytest.approx(case.world.p_xz[i, 0] / 0.6, abs=0.006)
        assert float(share_b) == pytest.approx(case.world.p_xz[i, 1] / 0.4, abs=0.006)
    assert rows["risk 0"][2] == rows["risk 0"][5] == "release"
    assert rows["risk 4"][2] == rows["risk 4"][5] == "detain"


def test_policy_table_shows_every_action_beyond_two():
    problem, world = make_tabular_problem(4, 2, 3, 3, random_state=0)
    case = DemoCase("random", problem, world)
    policy = fairdecide.TabularPolicy(np.full((4, 2, 3), 1 / 3))
    frame = policy_table(policy, case)
    assert list(frame.columns.get_level_values(1)[:4]) == ["share", "P(0)", "P(1)", "P(2)"]
    np.testing.assert_allclose(frame.xs("P(1)", axis=1, level=1), 1 / 3)
    np.testing.assert_allclose(frame.xs("share", axis=1, level=1).sum(axis=0), 1.0)


def test_demo_show_option(capsys):
    assert main(["demo", "--synthetic", "--show", "independence"]) == 0
    assert "Decisions of the policy 'independence <= 0.05'" in capsys.readouterr().out
    assert main(["demo", "--synthetic", "--show", "parity"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_demo_on_compas(data_dir, capsys):
    assert main(["demo", "--data-home", str(data_dir), "--epsilon", "0.1"]) == 0
    out = capsys.readouterr().out
    assert "COMPAS" in out and "independence <= 0.1" in out
    assert "African-American (60% of people), Caucasian (40% of people)" in out
    assert "share P(high risk) unconstrained" in out and "accuracy" in out
    assert "..." not in out


@pytest.mark.slow  # the same run as test_python_dash_m_runs_offline_by_default's
def test_default_demo_falls_back_without_data(monkeypatch, capsys):
    monkeypatch.delenv("FAIRDECIDE_DATA", raising=False)  # and the cache is empty
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "COMPAS not found locally" in out and "Synthetic bail problem" in out


def test_data_home_without_the_data_is_an_error(tmp_path, data_dir, monkeypatch, capsys):
    # Even with FAIRDECIDE_DATA holding COMPAS, the folder named explicitly must hold it.
    monkeypatch.setenv("FAIRDECIDE_DATA", str(data_dir))
    for folder, why in ((tmp_path / "nonexistent", "does not exist"),
                        (tmp_path, "holds no COMPAS data")):
        assert main(["demo", "--data-home", str(folder)]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        err = captured.err.strip()
        assert "\n" not in err and err.startswith("fairdecide: error: --data-home")
        assert str(folder) in err and why in err
        assert "compas-scores-two-years.csv" in err and "Download it from https://" in err


def test_corrupted_data_file_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("FAIRDECIDE_DATA", raising=False)
    path = tmp_path / "compas-scores-two-years.csv.gz"
    path.write_bytes(gzip.compress(b"id,race\n" * 1000)[:40])
    assert main(["demo", "--data-home", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert str(path) in err and "corrupted or truncated" in err and "delete" in err
    # The same file found through FAIRDECIDE_DATA is an error too, not a silent fallback.
    monkeypatch.setenv("FAIRDECIDE_DATA", str(tmp_path))
    assert main(["demo"]) == 2
    assert str(path) in capsys.readouterr().err


def test_bad_epsilon_is_a_clean_error(capsys):
    assert main(["demo", "--synthetic", "--epsilon", "-1"]) == 2
    assert "epsilon must be >= 0" in capsys.readouterr().err


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"fairdecide {fairdecide.__version__}\n"


def test_usage_errors_exit_2(capsys):
    assert main([]) == 2
    assert "usage: fairdecide" in capsys.readouterr().err


def test_python_dash_m_runs_offline_by_default(tmp_path):
    """The README's main job: no argument, no data, no network, the embedded default."""
    env = {k: v for k, v in os.environ.items() if k != "FAIRDECIDE_DATA"}
    env["FAIRDECIDE_CACHE"] = str(tmp_path / "cache")
    run = subprocess.run([sys.executable, "-m", "fairdecide", "demo"], capture_output=True,
                         text=True, env=env, check=True)
    assert "Synthetic bail problem" in run.stdout and "P(release)" in run.stdout
    # No FAIRDECIDE_DATA and an empty cache: the fallback says why it is synthetic.
    assert "COMPAS not found locally" in run.stdout


@pytest.mark.slow  # a second interpreter; test_version checks main(["--version"]) in-process
def test_python_dash_m_version(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "FAIRDECIDE_DATA"}
    env["FAIRDECIDE_CACHE"] = str(tmp_path / "cache")
    version = subprocess.run([sys.executable, "-m", "fairdecide", "--version"],
                             capture_output=True, text=True, env=env, check=True)
    assert version.stdout.strip() == f"fairdecide {fairdecide.__version__}"


def test_any_fairdecide_error_is_one_line(monkeypatch, capsys):
    import fairdecide.demo

    def fail(*args):
        raise fairdecide.FairdecideError("first line\n  second line")

    monkeypatch.setattr(fairdecide.demo, "run_demo", fail)
    assert main(["demo"]) == 2
    assert capsys.readouterr().err == "fairdecide: error: first line second line\n"
