"""Settings: defaults < user file < project file < environment, with errors naming file and key."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers.workdir import Workdir

from git_rewind.base import config
from git_rewind.base.errors import RewindError


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for key in config.DEFAULTS:
        monkeypatch.delenv(f"GIT_REWIND_{key.upper()}", raising=False)
    root = tmp_path / "proj"
    root.mkdir()
    return root


def test_layers_in_order(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert config.load(str(isolated))["gc_keep"].source == "default"
    user = Path(config.user_file())
    user.parent.mkdir(parents=True)
    user.write_text("# mine\ngc_keep = 10\nmax_file_size = '2M'\n")
    (isolated / ".git-rewind.toml").write_text("gc_keep = 20\n")
    settings = config.load(str(isolated))
    assert settings["gc_keep"].value == 20 and settings["gc_keep"].source.endswith(".git-rewind.toml")
    assert settings["max_file_size"].value == 2 * 1024 * 1024 and settings["max_file_size"].source == str(user)
    monkeypatch.setenv("GIT_REWIND_GC_KEEP", "30")
    settings = config.load(str(isolated))
    assert settings["gc_keep"].value == 30 and settings["gc_keep"].source == "environment"


@pytest.mark.parametrize("text,needle", [
    ("gc_keep = -1\n", "gc_keep"),
    ("max_file_size = 'lots'\n", "max_file_size"),
    ("max_store_size = '-1G'\n", "max_store_size"),
    ("gc_keep = \n", "invalid TOML"),
])
def test_invalid_values_name_file_and_key(isolated: Path, text: str, needle: str) -> None:
    (isolated / ".git-rewind.toml").write_text(text)
    with pytest.raises(RewindError) as err:
        config.load(str(isolated))
    assert ".git-rewind.toml" in str(err.value) and needle in str(err.value)


def test_invalid_environment_value(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_REWIND_MAX_FILE_SIZE", "huge")
    with pytest.raises(RewindError, match="GIT_REWIND_MAX_FILE_SIZE"):
        config.load(str(isolated))


@pytest.mark.parametrize("raw,expected", [(0, 0), ("512", 512), ("1K", 1024), ("3 MiB", 3 << 20), ("1g", 1 << 30)])
def test_sizes(raw: object, expected: int) -> None:
    assert config.parse_size(raw) == expected


def test_unknown_keys_are_kept_for_later_versions(isolated: Path) -> None:
    (isolated / ".git-rewind.toml").write_text("later_setting = 'on'\n")
    assert "later_setting" not in config.values(str(isolated))


# `git rewind config`, run for real in a repository, with HOME and XDG_CONFIG_HOME in a temp dir -----------


def _root(repo: Workdir) -> Path:
    return Path(repo.git("rev-parse", "--show-toplevel").strip())


def _user_file(repo: Workdir) -> Path:
    return Path(repo.env["XDG_CONFIG_HOME"]) / "git-rewind" / "config.toml"


def _listed(output: str) -> dict[str, str]:
    """`config list` lines as key -> "value  # source"."""
    return dict(line.split(" = ", 1) for line in output.splitlines())


def test_list_shows_every_layer_and_where_each_value_comes_from(repo: Workdir) -> None:
    user = _user_file(repo)
    user.parent.mkdir(parents=True)
    user.write_text("gc_keep = 10\nmax_file_size = '2M'\n")
    project = _root(repo) / ".git-rewind.toml"
    project.write_text("gc_keep = 20\ntier = 'aggressive'\n")

    listed = _listed(repo.ok("config", "list", env={"GIT_REWIND_LOCK_TIMEOUT": "5"}))

    assert list(listed) == list(config.DEFAULTS)
    assert listed["gc_keep"] == f"20  # {project}"
    assert listed["max_file_size"] == f"{2 << 20}  # {user}"
    assert listed["lock_timeout"] == "5  # environment"
    assert listed["gc_older_than_days"] == "30  # default"
    assert listed["tier"] == f'"aggressive"  # {project}'
    assert listed["anti_spam_seconds"] == "15  # tier aggressive"
    assert listed["exclude_patterns"] == '["node_modules/", ".git/", "dist/", "build/", "*.log"]  # default'

    as_json = json.loads(repo.ok("config", "list", "--json"))
    assert as_json["gc_keep"] == {"value": 20, "source": str(project)}
    assert as_json["min_change_chars"] == {"value": 25, "source": "tier aggressive"}


def test_get_prints_the_effective_value(repo: Workdir) -> None:
    (_root(repo) / ".git-rewind.toml").write_text("max_file_size = '10M'\ncritical_files = ['a', 'b']\n")
    assert repo.ok("config", "get", "max_file_size") == f"{10 << 20}\n"
    assert repo.ok("config", "get", "critical_files") == '["a", "b"]\n'
    assert repo.ok("config", "get", "tier") == "balanced\n"
    assert repo.ok("config", "get", "anti_spam_seconds") == "30\n"

    run = repo.rewind("config", "get", "gc_kep")
    assert run.returncode == 1 and run.stdout == ""
    assert len(run.stderr.splitlines()) == 1 and "gc_kep: unknown key" in run.stderr


def test_set_edits_the_file_in_place_keeping_comments_and_other_keys(repo: Workdir) -> None:
    project = _root(repo) / ".git-rewind.toml"
    project.write_bytes(
        b"# Checkpoint settings for this repository.\n"
        b"gc_keep = 10    # we review often\n"
        b"\n"
        b"# Big assets live in git-lfs anyway.\n"
        b"max_file_size='5M'\n"
        b"later_setting = { keep = true }\n"
        b"\n"
        b"[other_tool]\n"
        b"gc_keep = 3\n"
    )

    assert repo.ok("config", "set", "gc_keep", "20") == f"gc_keep = 20 in {project}\n"
    repo.ok("config", "set", "tier", "minimal")
    repo.ok("config", "set", "exclude_patterns", "vendor/, *.tmp")

    assert project.read_bytes() == (
        b"# Checkpoint settings for this repository.\n"
        b"gc_keep = 20    # we review often\n"
        b"\n"
        b"# Big assets live in git-lfs anyway.\n"
        b"max_file_size='5M'\n"
        b"later_setting = { keep = true }\n"
        b'tier = "minimal"\n'
        b'exclude_patterns = ["vendor/", "*.tmp"]\n'
        b"\n"
        b"[other_tool]\n"
        b"gc_keep = 3\n"
    )
    assert repo.ok("config", "get", "gc_keep") == "20\n"


def test_set_stores_natural_toml_types(repo: Workdir) -> None:
    repo.ok("config", "set", "auto_pack", "0")
    repo.ok("config", "set", "max_file_size", "10M")
    repo.ok("config", "set", "lock_timeout", "1_000")
    repo.ok("config", "set", "risky_prompts", '["drop.{1,3}tables", "rm -rf"]')
    repo.ok("config", "set", "critical_files", "")
    assert (_root(repo) / ".git-rewind.toml").read_text() == (
        "auto_pack = 0\n"
        'max_file_size = "10M"\n'
        "lock_timeout = 1000\n"
        'risky_prompts = ["drop.{1,3}tables", "rm -rf"]\n'
        "critical_files = []\n"
    )
    assert repo.ok("config", "get", "risky_prompts") == '["drop.{1,3}tables", "rm -rf"]\n'


def test_a_crlf_file_stays_crlf(repo: Workdir) -> None:
    project = _root(repo) / ".git-rewind.toml"
    project.write_bytes(b"# ours\r\ngc_keep = 10\r\n")
    repo.ok("config", "set", "gc_keep", "20")
    repo.ok("config", "set", "tier", "minimal")
    assert project.read_bytes() == b'# ours\r\ngc_keep = 20\r\ntier = "minimal"\r\n'


def test_user_and_project_scopes(repo: Workdir, tmp_path: Path) -> None:
    user, project = _user_file(repo), _root(repo) / ".git-rewind.toml"

    repo.ok("config", "set", "gc_keep", "20")  # inside a work tree: the project file
    assert project.read_text() == "gc_keep = 20\n" and not user.exists()

    run = repo.rewind("config", "set", "--user", "gc_keep", "10")  # creates the file and its directory
    assert run.returncode == 0 and user.read_text() == "gc_keep = 10\n"
    assert f"gc_keep is 20 here: {project} overrides it" in run.stderr
    repo.ok("config", "set", "--project", "gc_older_than_days", "7")
    assert project.read_text() == "gc_keep = 20\ngc_older_than_days = 7\n"

    outside = tmp_path / "outside"
    outside.mkdir()
    env = {"GIT_CEILING_DIRECTORIES": str(tmp_path)}
    repo.ok("config", "set", "tier", "aggressive", cwd=outside, env=env)  # outside: the user file
    assert user.read_text() == 'gc_keep = 10\ntier = "aggressive"\n'
    listed = _listed(repo.ok("config", "list", cwd=outside, env=env))
    assert listed["gc_keep"] == f"10  # {user}" and listed["gc_older_than_days"] == "30  # default"
    assert repo.ok("config", "get", "tier", cwd=outside, env=env) == "aggressive\n"

    run = repo.rewind("config", "set", "--project", "gc_keep", "1", cwd=outside, env=env)
    assert run.returncode == 2 and "--project" in run.stderr
    run = repo.rewind("config", "set", "--user", "--project", "gc_keep", "1")
    assert run.returncode == 2 and "exclude each other" in run.stderr


@pytest.mark.parametrize("key,value,needle", [
    ("gc_keep", "many", "gc_keep"),
    ("gc_keep", "-5", "must not be negative"),
    ("max_file_size", "lots", "not a size"),
    ("max_store_size", "2 GB of it", "not a size"),
    ("tier", "reckless", "not a tier"),
    ("risky_prompts", "refactor (all", "not a regular expression"),
    ("critical_files", '["a", 1]', "not a list of strings"),
    ("critical_files", '["a"]\ngc_keep = 1', "not a TOML array"),
    ("gc_kep", "1", "unknown key"),
])
def test_invalid_values_are_rejected_and_the_file_is_unchanged(repo: Workdir, key: str, value: str,
                                                                needle: str) -> None:
    project = _root(repo) / ".git-rewind.toml"
    before = b"# ours\r\ngc_keep = 10  # few\r\n"
    project.write_bytes(before)

    for args in (["--project"], ["--user"]):
        run = repo.rewind("config", "set", *args, "--", key, value)
        assert run.returncode == 1 and run.stdout == ""
        path = project if args == ["--project"] else _user_file(repo)
        assert run.stderr == f"error: {path}: {key}: " + run.stderr.split(f"{key}: ", 1)[1]
        assert needle in run.stderr and len(run.stderr.splitlines()) == 1

    assert project.read_bytes() == before
    assert not _user_file(repo).parent.exists()


def test_a_file_that_is_not_toml_is_not_touched(repo: Workdir) -> None:
    project = _root(repo) / ".git-rewind.toml"
    project.write_text("gc_keep = \n")
    for args in (["set", "tier", "minimal"], ["unset", "gc_keep"]):
        run = repo.rewind("config", *args)
        assert run.returncode == 1 and f"{project}: invalid TOML" in run.stderr
    assert project.read_text() == "gc_keep = \n"


def test_invalid_values_in_files_fail_list_and_get(repo: Workdir) -> None:
    project = _root(repo) / ".git-rewind.toml"
    project.write_text("gc_keep = -1\n")
    for args in (["list"], ["list", "--json"], ["get", "tier"]):
        run = repo.rewind("config", *args)
        assert run.returncode == 1 and run.stdout == ""
        assert run.stderr == f"error: {project}: gc_keep: must not be negative: -1\n"
    project.unlink()
    run = repo.rewind("config", "get", "tier", env={"GIT_REWIND_GC_KEEP": "soon"})
    assert run.returncode == 1 and "GIT_REWIND_GC_KEEP" in run.stderr


def test_environment_overrides_every_file(repo: Workdir) -> None:
    repo.ok("config", "set", "tier", "aggressive")
    env = {"GIT_REWIND_TIER": "minimal", "GIT_REWIND_CRITICAL_FILES": "Makefile, go.mod"}
    listed = _listed(repo.ok("config", "list", env=env))
    assert listed["tier"] == '"minimal"  # environment'
    assert listed["min_change_chars"] == "0  # tier minimal"
    assert listed["critical_files"] == '["Makefile", "go.mod"]  # environment'
    assert repo.ok("config", "get", "tier", env=env) == "minimal\n"

    run = repo.rewind("config", "set", "tier", "balanced", env=env)
    assert run.returncode == 0 and "tier is \"minimal\" here: GIT_REWIND_TIER overrides it" in run.stderr


def test_unset_removes_only_that_key(repo: Workdir) -> None:
    user = _user_file(repo)
    user.parent.mkdir(parents=True)
    user.write_text("gc_keep = 10\n")
    project = _root(repo) / ".git-rewind.toml"
    project.write_text("# ours\ngc_keep = 20  # few\n# sizes\nmax_file_size = '1M'\n")

    assert repo.ok("config", "unset", "gc_keep") == f"removed gc_keep from {project}\n"
    assert project.read_text() == "# ours\n# sizes\nmax_file_size = '1M'\n"
    assert _listed(repo.ok("config", "list"))["gc_keep"] == f"10  # {user}"

    assert repo.ok("config", "unset", "gc_keep") == f"gc_keep is not set in {project}\n"
    assert project.read_text() == "# ours\n# sizes\nmax_file_size = '1M'\n"
    repo.ok("config", "unset", "--user", "gc_keep")
    assert user.read_text() == "" and repo.ok("config", "get", "gc_keep") == "1000\n"

    user.unlink()
    assert repo.ok("config", "unset", "--user", "tier") == f"tier is not set in {user}\n"
    assert not user.exists()
    assert repo.rewind("config", "unset", "gc_kep").returncode == 1


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links")
def test_set_writes_through_a_symlinked_user_file(repo: Workdir, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "git-rewind.toml"
    dotfiles.parent.mkdir()
    dotfiles.write_text("# from my dotfiles\n")
    dotfiles.chmod(0o600)
    user = _user_file(repo)
    user.parent.mkdir(parents=True)
    user.symlink_to(dotfiles)

    repo.ok("config", "set", "--user", "gc_keep", "5")
    assert user.is_symlink() and dotfiles.read_text() == "# from my dotfiles\ngc_keep = 5\n"
    assert dotfiles.stat().st_mode & 0o777 == 0o600


def test_a_negative_value_reaches_the_check_instead_of_being_read_as_an_option(repo: Workdir) -> None:
    """`config set KEY -5` names a value, not an option (issue 12, item 15)."""
    run = repo.rewind("config", "set", "anti_spam_seconds", "-5")
    assert run.returncode == 1 and "must not be negative: '-5'" in run.stderr and "No such option" not in run.stderr
    assert not (repo.path / ".git-rewind.toml").exists()


def test_max_store_size_defaults_to_a_gibibyte_and_reads_sizes(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert config.load(str(isolated))["max_store_size"].value == 1 << 30
    (isolated / ".git-rewind.toml").write_text("max_store_size = '2GiB'\n")
    assert config.load(str(isolated))["max_store_size"].value == 2 << 30
    monkeypatch.setenv("GIT_REWIND_MAX_STORE_SIZE", "0")  # no cap
    assert config.load(str(isolated))["max_store_size"].value == 0


def test_the_typed_settings_name_every_default_and_nothing_else() -> None:
    """config.Settings (what mypy checks every `settings[...]` against) has exactly DEFAULTS' keys."""
    import ast

    tree = ast.parse(Path(config.__file__).read_text())
    typed = next(node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name == "Settings")
    fields = [n.target.id for n in typed.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
    assert fields == list(config.DEFAULTS)
