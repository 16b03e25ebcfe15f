import gzip
import hashlib
import shutil

import numpy as np
import pytest

from fairdecide import FairdecideError, LoggedData, TabularWorld
from fairdecide.datasets import (
    DataNotFoundError,
    find_dataset,
    load_adult,
    load_compas,
    load_german,
    load_open_bandit,
    make_bail_problem,
    make_logged_bandit,
    make_tabular_problem,
    sample_logged_data,
)
from fairdecide.datasets import open_bandit as open_bandit_module
from fairdecide.datasets import real as real_module


def test_compas(data_dir):
    df = load_compas(data_dir)
    assert len(df) == 7214
    for col in ("name", "first", "last", "dob", "decile_score.1", "priors_count.1"):
        assert col not in df.columns
    assert {"two_year_recid", "race", "sex", "age_cat", "decile_score"} <= set(df.columns)
    assert len(load_compas(data_dir, propublica_filter=True)) == 6172


def test_adult(data_dir):
    train = load_adult(data_dir)
    test = load_adult(data_dir, split="test")
    assert (len(train), len(test)) == (32561, 16281)
    assert set(train["income"]) == set(test["income"]) == {"<=50K", ">50K"}
    assert train["workclass"].isna().sum() > 0  # "?" became missing
    assert len(load_adult(data_dir, split="both")) == 32561 + 16281
    with pytest.raises(FairdecideError, match="split must be"):
        load_adult(data_dir, split="validation")


def test_german(data_dir):
    df = load_german(data_dir)
    assert len(df) == 1000 and set(df["credit"]) == {"good", "bad"}
    assert (df["credit"] == "good").sum() == 700
    assert set(df["sex"]) == {"male", "female"}


def test_environment_variable_is_used(data_dir, monkeypatch):
    monkeypatch.setenv("FAIRDECIDE_DATA", str(data_dir))
    assert len(load_german(download=False)) == 1000


def test_missing_data_offline_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv("FAIRDECIDE_DATA", raising=False)
    with pytest.raises(DataNotFoundError, match="set FAIRDECIDE_DATA"):
        load_compas(tmp_path, download=False)


@pytest.mark.parametrize("env", [True, False])
@pytest.mark.parametrize("load", [
    lambda home: load_compas(home, download=False),
    lambda home: load_adult(home, download=False),
    lambda home: load_german(home, download=False),
    lambda home: find_dataset("german", home, url="file:///nowhere/german.data"),
    lambda home: load_open_bandit(home),
])
def test_missing_data_names_every_place_looked_in(load, env, tmp_path, monkeypatch):
    """Issue 51: every loader's DataNotFoundError names each place it looked in (the
    data_home argument, FAIRDECIDE_DATA with its value or that it is unset, the cache
    folder) and the ways to point it at a copy, in the same words (one function)."""
    home, data, cache = (tmp_path / name for name in ("home", "data", "cache"))
    monkeypatch.setenv("FAIRDECIDE_CACHE", str(cache))
    if env:
        monkeypatch.setenv("FAIRDECIDE_DATA", str(data))
    else:
        monkeypatch.delenv("FAIRDECIDE_DATA", raising=False)
    monkeypatch.setattr(open_bandit_module, "obp_folder", lambda: None)
    with pytest.raises(DataNotFoundError) as info:
        load(home)
    message = str(info.value)
    for place in (f"data_home={home}", f"FAIRDECIDE_DATA={data}" if env else
                  "FAIRDECIDE_DATA (not set)", f"the cache folder {cache}",
                  "set FAIRDECIDE_DATA to a folder holding it, pass data_home=FOLDER or "
                  "put it in the cache folder"):
        assert place in message
    assert "\n" not in message


def test_download_verifies_checksum_and_caches(data_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("FAIRDECIDE_DATA", raising=False)
    src = tmp_path / "mirror" / "german.data"
    src.parent.mkdir()
    src.write_bytes(gzip.decompress((data_dir / "german.data.gz").read_bytes()))
    raw = find_dataset("german", tmp_path / "empty", url=src.as_uri())
    assert hashlib.sha256(raw).hexdigest() == real_module.FILES["german"].sha256
    cached = real_module.cache_dir() / "german.data"
    assert cached.is_file()
    # Now found in the cache without any download.
    assert len(load_german(tmp_path / "empty", download=False)) == 1000


def test_download_with_wrong_checksum_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("FAIRDECIDE_DATA", raising=False)
    bad = tmp_path / "german.data"
    bad.write_text("1 2 3\n")
    with pytest.raises(FairdecideError, match="sha256"):
        find_dataset("german", tmp_path / "empty", url=bad.as_uri())
    assert not (real_module.cache_dir() / "german.data").exists()


def test_failed_download_is_clear(tmp_path, monkeypatch):
    monkeypatch.delenv("FAIRDECIDE_DATA", raising=False)
    with pytest.raises(DataNotFoundError, match=r"download .* failed"):
        find_dataset("german", tmp_path, url=(tmp_path / "nothing").as_uri())


def test_modified_local_copy_is_refused(data_dir, tmp_path):
    shutil.copy(data_dir / "german.data.gz", tmp_path / "german.data.gz")
    (tmp_path / "german.data.gz").write_bytes(gzip.compress(b"tampered\n"))
    with pytest.raises(FairdecideError, match="does not match the canonical"):
        load_german(tmp_path)


def test_unknown_dataset():
    with pytest.raises(FairdecideError, match="unknown data set"):
        find_dataset("iris")


def test_compas_to_logged_data(data_dir):
    df = load_compas(data_dir)
    df["priors"] = df["priors_count"].clip(upper=2)
    data = LoggedData.from_frame(df, features=["age_cat", "priors"], group="race",
                                 outcome="two_year_recid")
    assert data.n == 7214 and data.n_x == 9 and data.n_z == 6


def test_bail_problem_structure():
    problem, world = make_bail_problem()
    assert problem.outcome_depends_on_action
    np.testing.assert_allclose(problem.utility, [[0, -1, -2], [1, 0, -1]])
    np.testing.assert_allclose(world.p_y[:, :, 0, 0], 1.0)  # detained: no offence


def test_sample_logged_data_matches_world():
    problem, world = make_tabular_problem(3, 2, 2, 2, outcome_depends_on_action=True,
                                          random_state=2)
    data = sample_logged_data(problem, world, 100_000, random_state=0)
    assert np.all(data.propensity == 0.5)
    est = TabularWorld.from_data(data, problem)
    np.testing.assert_allclose(est.p_xz, world.p_xz, atol=0.01)
    # Each outcome frequency within five standard errors of the truth.
    n_cell = np.zeros((3, 2, 2))
    np.add.at(n_cell, (data.x, data.z, data.a), 1)
    se = np.sqrt(world.p_y * (1 - world.p_y) / n_cell[..., None])
    assert np.all(np.abs(est.p_y - world.p_y) <= 5 * se + 1e-12)
    with pytest.raises(FairdecideError, match="n must be a positive integer"):
        sample_logged_data(problem, world, 0)


def test_generator_arguments():
    with pytest.raises(FairdecideError, match="n_actions must be an integer >= 2"):
        make_tabular_problem(n_actions=1)
    with pytest.raises(FairdecideError, match="concentration"):
        make_tabular_problem(concentration=0)


@pytest.mark.parametrize("content", [
    gzip.compress(b"age,race\n" * 200)[:30],  # truncated download
    b"<html>rate limited</html>",  # not gzip at all
    gzip.compress(b"a,b\n1,2\n")[:12] + b"\x00" * 20 + gzip.compress(b"a,b\n1,2\n")[32:],
], ids=["truncated", "not-gzip", "bad-deflate"])
def test_corrupted_gz_names_the_file(tmp_path, monkeypatch, content):
    monkeypatch.delenv("FAIRDECIDE_DATA", raising=False)
    path = tmp_path / "compas-scores-two-years.csv.gz"
    path.write_bytes(content)
    with pytest.raises(FairdecideError, match=r"corrupted or truncated \(gzip: ") as info:
        load_compas(tmp_path, download=False)
    message = str(info.value)
    assert str(path) in message and "delete" in message and "\n" not in message
    assert not isinstance(info.value, DataNotFoundError)  # found, but broken


def test_bad_checksum_names_the_file_and_the_fix(tmp_path):
    path = tmp_path / "german.data"
    path.write_text("A11 6 A34\n")
    with pytest.raises(FairdecideError, match="does not match the canonical") as info:
        load_german(tmp_path, download=False)
    assert str(path) in str(info.value) and "delete" in str(info.value)


@pytest.mark.parametrize("loader, filename, content", [
    (load_compas, "compas-scores-two-years.csv", b"id,name\n1,x\n"),  # columns missing
    (load_compas, "compas-scores-two-years.csv", b""),  # empty
    (load_german, "german.data", b"A11 6 A34 A43 1169 A65 A75 4 A93 A101 4 A121 67 A143 "
                                 b"A152 2 A173 1 A192 A201 7\n"),  # bad class code
    (load_adult, "adult.data", b"age,workclass\nold,?\n"),  # non-numeric age
], ids=["compas-columns", "compas-empty", "german-codes", "adult-values"])
def test_unparsable_file_names_the_file(tmp_path, loader, filename, content):
    path = tmp_path / filename
    path.write_bytes(gzip.compress(content))
    path = path.rename(path.with_name(filename + ".gz"))
    with pytest.raises(FairdecideError, match="delete it and download it again") as info:
        loader(tmp_path, download=False, verify=False)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("kwargs, name", [
    ({"data_home": 3}, "data_home"), ({"data_home": ["a"]}, "data_home"),
    ({"url": 1}, "url"), ({"download": "no"}, "download"), ({"verify": None}, "verify"),
])
def test_loader_arguments_are_checked_by_name(kwargs, name):
    args = {"download": False, **kwargs}
    with pytest.raises(FairdecideError, match=f"^{name} must be"):
        find_dataset("german", **args)
    with pytest.raises(FairdecideError, match="unknown data set"):
        find_dataset(["compas"])


def test_nearby_policy_pickles_and_gives_the_same_probabilities():
    # issue 23, item 8: nearby_policy returned a closure, which pickle refuses (so it
    # could not be sent to a process pool or cached)
    import pickle

    from scipy.special import softmax

    _, _, truth = make_logged_bandit(10, random_state=0)
    policy = truth.nearby_policy(0.4, random_state=1)
    again = pickle.loads(pickle.dumps(policy))
    X, _ = truth.draw_features(50, np.random.RandomState(3))
    # the rule as documented, written here: softmax(X @ (logging_coef + 0.4 N(0, 1)))
    W = truth.logging_coef + 0.4 * np.random.RandomState(1).standard_normal(
        truth.logging_coef.shape)
    want = softmax(X @ W, axis=1)
    np.testing.assert_allclose(policy(X), want, rtol=1e-12)
    np.testing.assert_array_equal(again(X), policy(X))
    assert truth.value(again, 2000) == truth.value(policy, 2000)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"scale": "0.4"}, "scale must be a real number"),
    ({"scale": -1.0}, r"scale must be a finite number in \[0.0, inf\)"),
    ({"random_state": 1.5}, "random_state must be None, an integer or a numpy RandomState"),
    ({"random_state": -1}, r"random_state must be an integer in \[0, 2\*\*32 - 1\]"),
])
def test_nearby_policy_names_bad_arguments(kwargs, match):
    _, _, truth = make_logged_bandit(10, random_state=0)
    with pytest.raises(FairdecideError, match=match):
        truth.nearby_policy(**kwargs)


def test_adult_docstring_lists_the_columns_it_returns(data_dir):
    # issue 40, finding 5: the columns (education_num, not UCI's education-num) were not
    # listed. The list is read from the docstring's Returns section and compared with
    # the loaded frame, so either changing alone fails this test.
    import re

    returns = load_adult.__doc__.split("Returns\n")[1]
    listed = re.findall(r"``(\w+)``", returns.split("Columns, in order:")[1].split(".")[0])
    df = load_adult(data_dir)
    assert listed == list(df.columns)
    numeric = re.search(r"six numeric\s+columns \(([^)]*)\)", returns).group(1)
    assert re.split(r",\s+", numeric) == [c for c in df.columns if df[c].dtype == np.int64]
