"""Generated files are written together or not at all (issue 11, item 9): both temporaries
are written before either is renamed, a failure puts back what was there, leaves no
temporary, and is a SymgenError naming the destination file (never the temporary)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from cli_runner import run_split
from paths import EXAMPLES

from symgen import SymgenError
from symgen.backends.files import write_files_atomically

FILES = {"x.h": "new header\n", "x.c": "new source\n"}


def names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_writes_every_file_with_the_umask_mode(tmp_path):
    out = tmp_path / "deep" / "out"
    paths = write_files_atomically(out, FILES)
    assert paths == [out / "x.h", out / "x.c"]
    assert {p.name: p.read_text() for p in paths} == FILES
    umask = os.umask(0o022)
    os.umask(umask)
    for p in paths:
        assert p.stat().st_mode & 0o777 == 0o666 & ~umask
    write_files_atomically(out, {"x.h": "again\n", "x.c": "again\n"})  # replaces
    assert (out / "x.c").read_text() == "again\n" and names(out) == ["x.c", "x.h"]


def test_a_directory_under_a_regular_file_is_named(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SymgenError, match=rf"cannot create the directory {blocker}/out: "
                                          r"Not a directory$"):
        write_files_atomically(blocker / "out", FILES)


def test_failing_second_file_leaves_the_old_pair(tmp_path):
    """x.c cannot be replaced (it is a directory): x.h keeps its old content."""
    (tmp_path / "x.h").write_text("old header\n")
    (tmp_path / "x.c").mkdir()
    with pytest.raises(SymgenError, match=rf"^cannot write {tmp_path}/x.c: Is a directory$"):
        write_files_atomically(tmp_path, FILES)
    assert (tmp_path / "x.h").read_text() == "old header\n"
    assert names(tmp_path) == ["x.c", "x.h"]  # no temporary or backup left


@pytest.mark.parametrize("existed", [True, False])
def test_rename_failing_on_the_second_file_rolls_back(tmp_path, monkeypatch, existed):
    if existed:
        for name in FILES:
            (tmp_path / name).write_text(f"old {name}\n")
    real_replace = os.replace
    calls = []

    def replace(src, dst):
        calls.append(Path(dst).name)
        if Path(dst).name == "x.c":
            raise OSError(errno.EIO, "Input/output error")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(SymgenError, match=rf"^cannot write {tmp_path}/x.c: Input/output error$"):
        write_files_atomically(tmp_path, FILES)
    assert calls[:2] == ["x.h", "x.c"]  # both written first, then renamed in order
    if existed:
        assert {n: (tmp_path / n).read_text() for n in FILES} == {n: f"old {n}\n" for n in FILES}
        assert names(tmp_path) == ["x.c", "x.h"]
    else:
        assert names(tmp_path) == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root writes into read-only directories")
def test_read_only_directory_names_the_destination(tmp_path):
    out = tmp_path / "ro"
    out.mkdir(mode=0o555)
    try:
        with pytest.raises(SymgenError, match=rf"^cannot write {out}/x.h: Permission denied$"):
            write_files_atomically(out, FILES)
        assert names(out) == []
    finally:
        out.chmod(0o755)


def test_cli_generate_into_an_unwritable_place_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run_split("generate", str(EXAMPLES / "double_pendulum.yaml"), "--kernels",
                       "mass_matrix", "-o", str(blocker / "out"))
    assert result.exit_code == 2
    last = result.stderr.strip().splitlines()[-1]
    assert last == f"symgen: error: cannot create the directory {blocker}/out: Not a directory"
    assert ".tmp" not in result.stderr
