"""Result files under faults: a full disk, an existing file, a file being written, corrupted bytes.

The disk-full case runs in a subprocess with a file size limit (``RLIMIT_FSIZE``; SIGXFSZ is
ignored so that the write fails with EFBIG, as on a full disk with ENOSPC, instead of killing
the process).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from flexmb.results import ResultFileError
from models import kicked_pendulum, pendulum_chain

REPO = Path(__file__).resolve().parents[1]
T_END, DT = 1.0, 0.005


def run_in_subprocess(script: str, **env: str) -> subprocess.CompletedProcess:
    code = f"import sys\nsys.path.insert(0, {str(REPO / 'tests')!r})\n" + textwrap.dedent(script)
    return subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=str(REPO), **env),
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("flush_interval", ["0", "0.2"])
def test_a_full_disk_ends_the_run_with_one_clear_line_and_keeps_every_flushed_step(tmp_path, flush_interval):
    reference = fm.integrate(pendulum_chain(), DT, T_END, save_to=tmp_path / "reference.h5")
    limit = (tmp_path / "reference.h5").stat().st_size // 2         # the run fills it about half way
    path = tmp_path / "full.h5"
    done = run_in_subprocess(f"""
        import resource, signal
        import flexmb as fm
        from models import pendulum_chain
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)               # the write fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
        try:
            fm.integrate(pendulum_chain(), {DT}, {T_END}, save_to={str(path)!r})
        except fm.results.ResultFileError as exc:
            print(exc, file=sys.stderr)
            sys.exit(1)
        """, FLEXMB_FLUSH_INTERVAL=flush_interval)
    assert done.returncode == 1, f"not a clean exit ({done.returncode}):\n{done.stderr}"
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line, got:\n{done.stderr}"
    message = lines[0]
    assert str(path) in message and "File too large [EFBIG]" in message, message
    kept = int(re.search(r"keeps the (\d+) steps? written before", message).group(1))
    assert "status 'failed'" in message, message

    r = fm.load_result(path)
    assert r.n_steps == kept, f"the message says {kept} steps, the file holds {r.n_steps}"
    assert r.meta["status"] == "failed"
    assert 1 <= kept < reference.n_steps
    if flush_interval == "0":
        assert kept > 10, f"with every step flushed at once the file should hold many steps, holds {kept}"
    for name in ("t", "u", "v", "kinetic", "work"):
        assert np.array_equal(np.array(getattr(r, name)), np.array(getattr(reference, name)[:kept])), name
    assert np.array_equal(r.element("links", "N"), reference.element("links", "N")[:kept])
    # the file is closed properly: any HDF5 reader opens it, not only SWMR readers
    import h5py
    with h5py.File(path, "r") as f:
        assert f["committed"][0] == kept
    # once there is room again, the run continues from the file
    fm.integrate(pendulum_chain(), DT, T_END, restart_from=path)
    continued = fm.load_result(path)
    assert continued.meta["status"] == "finished" and np.array_equal(np.array(continued.u), np.array(reference.u))


def test_an_existing_file_is_replaced_only_when_asked(tmp_path):
    path = tmp_path / "run.h5"
    fm.integrate(pendulum_chain(), DT, 0.05, save_to=path)
    before = path.read_bytes()
    m = fm.Model(dim=2)
    n = m.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    m.add_beam2d([n], EA=1e6, EI=1e3)
    m.fix(n[0])
    m.add_load(n[1], "ux", -1.0)
    writes = {"integrate": lambda **kw: fm.integrate(pendulum_chain(), DT, 0.05, save_to=path, **kw),
              "load_control": lambda **kw: fm.load_control(m, 2, save_to=path, **kw),
              "arc_length": lambda **kw: fm.arc_length(m, 0.01, n_steps=2, save_to=path, **kw),
              "Result.save": lambda **kw: fm.integrate(pendulum_chain(), DT, 0.02).save(path, **kw),
              "BucklingResult.save": lambda **kw: fm.linear_buckling(m, n_modes=1).save(path, **kw)}
    for name, write in writes.items():
        with pytest.raises(FileExistsError, match=r"run.h5 exists; pass overwrite=True to replace it \(flexmb "
                                                  r"command line: --force\)"):
            write()
        assert path.read_bytes() == before, f"{name} changed the file it refused"
        write(overwrite=True)
        assert fm.load_result(path).meta["status"] == "finished", name
        before = path.read_bytes()


def test_a_file_that_cannot_be_created_is_named_with_the_cause(tmp_path):
    (tmp_path / "plain").write_text("not a folder")
    with pytest.raises(ResultFileError, match=r"plain/run.h5: cannot create its folder .*plain \(File exists\)"):
        fm.integrate(pendulum_chain(), DT, 0.05, save_to=tmp_path / "plain" / "run.h5")
    with pytest.raises(IsADirectoryError, match="is a directory"):
        fm.integrate(pendulum_chain(), DT, 0.05, save_to=tmp_path, overwrite=True)


def test_a_file_open_as_an_input_of_this_process_is_never_written(tmp_path):
    import h5py

    path = tmp_path / "run.h5"
    fm.integrate(pendulum_chain(), DT, 0.05, save_to=path)
    before = path.read_bytes()
    with h5py.File(path, "r"):
        with pytest.raises(ResultFileError, match="is open for reading in this process"):
            fm.integrate(pendulum_chain(), DT, 0.05, save_to=path, overwrite=True)
    assert path.read_bytes() == before


def test_a_live_file_is_read_while_its_run_goes_on_and_not_overwritten(tmp_path, capsys):
    """A subprocess writes a run that waits at t = 0.1 s until the test releases it: meanwhile
    load_result (and ``flexmb info``) read the steps committed so far, and no other run may
    replace the file."""
    path, release = tmp_path / "live.h5", tmp_path / "release"
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, os, time
        sys.path.insert(0, {str(REPO / 'tests')!r})
        import flexmb as fm
        from models import pendulum_chain
        asm = pendulum_chain()
        def wait_for_release(t):
            while t > 0.1 and not os.path.exists({str(release)!r}):
                time.sleep(0.01)
            return 0.0
        asm.model.add_load(3, "uy", wait_for_release)
        fm.integrate(fm.Assembly(asm.model), {DT}, 0.2, save_to={str(path)!r})
        """)], env=dict(os.environ, PYTHONPATH=str(REPO), FLEXMB_FLUSH_INTERVAL="0"))
    try:
        deadline = time.monotonic() + 60.0
        live = None
        while time.monotonic() < deadline:                   # poll until the run waits at t = 0.1 s
            try:
                live = fm.load_result(path)
            except (FileNotFoundError, ValueError):          # not created, or its first step not yet written
                live = None
            if live is not None and live.n_steps == 21:
                break
            assert writer.poll() is None, "the writing run ended early"
            time.sleep(0.01)
        assert live is not None and live.n_steps == 21, "the live file never showed the steps up to t = 0.1 s"
        assert live.meta["status"] == "running" and np.allclose(live.t, np.arange(21) * DT, rtol=0, atol=1e-12)

        from flexmb.cli import main
        assert main(["info", str(path)]) == 0
        assert "running" in capsys.readouterr().out

        with pytest.raises(ResultFileError, match="is being written by another run"):
            fm.integrate(pendulum_chain(), DT, 0.05, save_to=path, overwrite=True)
    finally:
        release.touch()
        assert writer.wait(timeout=60) == 0
    final = fm.load_result(path)
    assert final.meta["status"] == "finished" and final.n_steps == 41
    assert np.array_equal(np.array(final.u[:21]), np.array(live.u)), "the live reading differs from the file"


@pytest.mark.parametrize("dataset", ["steps/u", "steps/kinetic", "steps/elements/0/N", "model/coordinates",
                                     "log/text"])
def test_a_flipped_byte_in_a_dataset_is_detected_on_load(tmp_path, dataset):
    import h5py

    path = tmp_path / "run.h5"
    history = fm.integrate(kicked_pendulum(), 0.1, 0.5, newton=fm.NewtonSettings(max_iterations=3), save_to=path)
    assert history.cutbacks, "the run log (log/text) needs an entry"
    with h5py.File(path, "r") as f:
        assert f[dataset].size, f"{dataset} is empty; nothing to corrupt"
        chunk = f[dataset].id.get_chunk_info(0)
    with open(path, "r+b") as raw:                            # flip one bit in the middle of the chunk's data
        raw.seek(chunk.byte_offset + chunk.size // 3)
        byte = raw.read(1)[0]
        raw.seek(chunk.byte_offset + chunk.size // 3)
        raw.write(bytes([byte ^ 0x04]))
    with pytest.raises(ValueError, match=f"{re.escape(str(path))}: dataset /{dataset} is corrupted"):
        fm.load_result(path)


def test_a_format_version_1_file_is_still_read(tmp_path):
    """The layout written before checksums and SWMR: status and cut-backs as attributes, the log as
    variable-length strings, no /committed."""
    import h5py

    h = fm.integrate(pendulum_chain(), DT, 0.03)
    path = tmp_path / "old.h5"
    with h5py.File(path, "w") as f:
        f.attrs.update({"format": "flexmb-result", "format_version": 1, "kind": "dynamic", "flexmb_version": "0.1.0",
                        "meta": '{"scheme": "mid-point", "dt": 0.01}', "created": "2026-01-01T00:00:00",
                        "cutbacks": 2, "status": "finished"})
        g = f.create_group("model")
        g.attrs.update({"dim": 2, "joints": "[]"})
        g["coordinates"], g["has_rotations"] = h.layout.coordinates, h.layout.has_rotations.astype(np.uint8)
        g["point_masses"], g["prescribed"] = h.layout.point_masses, h.layout.prescribed
        grp = g.create_group("groups/0")
        grp.attrs.update({"name": "links", "kind": "Truss", "section": "{}", "outputs": '{"N": "N"}'})
        grp["connectivity"] = h.layout.groups[0].connectivity
        for name in ("t", "u", "v", "reactions", "kinetic", "strain", "work", "angular_momentum"):
            f[f"steps/{name}"] = np.array(getattr(h, name))
        f["steps/elements/0/N"] = h.element("links", "N")
        text = h5py.string_dtype()
        f["log/at"] = [0.01]
        f.create_dataset("log/kind", data=["cutback"], dtype=text)
        f.create_dataset("log/message", data=["step dt = 0.01 s did not converge"], dtype=text)
    r = fm.load_result(path)
    assert r.meta["status"] == "finished" and r.cutbacks == 2 and r.n_steps == h.n_steps == 7
    assert np.array_equal(np.array(r.u), np.array(h.u)) and np.array_equal(r.element("links", "N"), h.element("links", "N"))
    assert r.events[0].message == "step dt = 0.01 s did not converge"
    with pytest.raises(fm.ModelError, match="format version 1"):
        fm.integrate(pendulum_chain(), DT, 0.05, restart_from=path)


def test_every_writer_on_a_full_disk_names_its_file_and_leaves_nothing_half_written(tmp_path):
    """A file size limit smaller than each output: write_xdmf, write_vtu_series, NaturalModes.save,
    BucklingResult.save, Result.save and integrate(save_to=...) each raise one clear error naming
    its file (no crash), leave no partial file or scratch folder, and leave the files they were to
    replace as they were."""
    out = tmp_path / "out"
    out.mkdir()
    old = {name: f"an older {name}\n".encode() for name in ("modes.h5", "buckling.h5", "saved.h5", "run.h5",
                                                             "run.xdmf", "run.xdmf.h5")}
    for name, content in old.items():
        (out / name).write_bytes(content)
    done = run_in_subprocess(f"""
        import resource, signal
        import numpy as np
        import flexmb as fm
        from flexmb.io.export import write_vtu_series, write_xdmf
        import h5py, meshio, meshio.xdmf                            # imported before the limit
        out = {str(out)!r}
        m = fm.Model(dim=2)
        n = m.add_nodes(np.c_[np.linspace(0.0, 2.0, 41), np.zeros(41)])
        m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e6, EI=1e2, rho_A=1.0, name="beam")
        m.fix(n[0])
        m.set_gravity([0.0, -9.81])
        history = fm.integrate(m, 0.01, 0.2, progress=False)
        modes = fm.natural_modes(m, 4)
        m.add_load(n[-1], "ux", -1.0)
        buckling = fm.linear_buckling(m, n_modes=2)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)               # the write fails with EFBIG instead
        resource.setrlimit(resource.RLIMIT_FSIZE, (3000, 3000))    # each output is larger
        writers = {{"write_xdmf": lambda: write_xdmf(history, out + "/run.xdmf", overwrite=True),
                   "write_vtu_series": lambda: write_vtu_series(history, out + "/vtu"),
                   "NaturalModes.save": lambda: modes.save(out + "/modes.h5", overwrite=True),
                   "BucklingResult.save": lambda: buckling.save(out + "/buckling.h5", overwrite=True),
                   "Result.save": lambda: history.save(out + "/saved.h5", overwrite=True),
                   "integrate": lambda: fm.integrate(m, 0.01, 0.2, save_to=out + "/run.h5", overwrite=True),
                   "integrate, new file": lambda: fm.integrate(m, 0.01, 0.2, save_to=out + "/new.h5")}}
        for name, write in writers.items():
            try:
                write()
                print(name, "wrote its file")
            except OSError as exc:
                print(name, "|", type(exc).__name__, "|", exc)
        """)
    assert done.returncode == 0, f"the writers did not all return ({done.returncode}):\n{done.stderr}"
    reports = dict(line.split(" | ", 1) for line in done.stdout.strip().splitlines())
    assert len(reports) == 7, done.stdout
    expect = {"write_xdmf": ("ExportError", rf"cannot write {out}/run.xdmf: writing {out}/run.xdmf.h5 failed"),
              "write_vtu_series": ("ExportError", rf"cannot write {out}/vtu/result.pvd: writing "
                                                  rf"{out}/vtu/result_0000\d.vtu failed"),
              "NaturalModes.save": ("ResultFileError", f"result file {out}/modes.h5: writing failed"),
              "BucklingResult.save": ("ResultFileError", f"result file {out}/buckling.h5: writing failed"),
              "Result.save": ("ResultFileError", f"result file {out}/saved.h5: writing failed"),
              "integrate": ("ResultFileError", f"result file {out}/run.h5: cannot write it"),
              "integrate, new file": ("ResultFileError", f"result file {out}/new.h5: cannot write it")}
    for name, (kind, start) in expect.items():
        got_kind, message = reports[name].split(" | ")
        assert got_kind == kind and re.match(start, message), f"{name}: {reports[name]}"
        assert "File too large [EFBIG]" in message, f"{name}: {message}"
        kept = "nothing was written" if kind == "ExportError" else "no file was made" if "new" in name else \
            "is as it was before"
        assert kept in message, f"{name} does not say what it kept: {message}"
    left = sorted(p.name for p in out.rglob("*"))
    assert left == sorted([*old, "vtu"]), f"left behind: {sorted(set(left) - set(old))}"
    for name, content in old.items():
        assert (out / name).read_bytes() == content, f"{name} was changed by a failed write"
