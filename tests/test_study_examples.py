"""The three example design studies of examples/studies/ in their quick mode (issue 18, item 4):
run through flexmb.studies (serially, and one through the CLI on a 2-worker local cluster),
checked against validated values, an independent re-analysis and the inverse modification."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from flexmb.studies import load_study, load_study_script

STUDIES = Path(__file__).resolve().parents[1] / "examples" / "studies"


def script(name: str):
    """The study script's STUDY and its module (for the script's helpers and constants)."""
    study = load_study_script(STUDIES / f"{name}.py")
    return study, sys.modules[study.run_variant.__module__]


@pytest.fixture(scope="module")
def slider_crank(tmp_path_factory):
    study, module = script("slider_crank_sweep")
    out = tmp_path_factory.mktemp("slider_crank")
    result = study.run(out=out, serial=True, quick=True, progress=False)
    return result, module, out


def test_slider_crank_reproduces_case_a_and_falls_with_stiffness(slider_crank):
    result, module, out = slider_crank
    t = result.table
    assert (t["error"] == "").all(), t["error"]
    case_a = t[(t["EI_ratio"] == 1.0) & (t["slider_mass"] == 0.0)]["peak"].item()
    # validation case slider-crank-a: 16 elements, 2560 steps per 8 rad, within 1 % of 0.009762
    assert abs(case_a / 0.009762 - 1.0) < 1e-2, f"case A first maximum {case_a} vs 0.009762"
    for mass, rows in t.groupby("slider_mass"):
        peaks = rows.sort_values("EI_ratio")["peak"].to_numpy()
        assert np.all(np.diff(peaks) < 0.0), f"slider mass {mass}: peak not falling with EI: {peaks}"
        times = rows.sort_values("EI_ratio")["peak_time"].to_numpy()
        assert np.all(times > 0.0) and np.all(times < 2.0 / module.OMEGA), times
    written = result.write(out)
    assert {"responses.png", "sensitivity.png", "summary.md"} <= {p.name for p in written}
    assert all(p.stat().st_size > 0 for p in written)


def test_slider_crank_cli_on_two_workers_matches_serial(slider_crank, tmp_path):
    serial, _, _ = slider_crank
    out = tmp_path / "cluster"
    done = subprocess.run([sys.executable, "-m", "flexmb.cli", "study", str(STUDIES / "slider_crank_sweep.py"),
                           "--quick", "--workers", "2", "--out", str(out)], check=False, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (out / "responses.png").is_file() and (out / "summary.md").is_file()
    cluster = load_study(out).table
    columns = ["variant", "EI_ratio", "slider_mass", "peak", "peak_time"]
    pd.testing.assert_frame_equal(cluster[columns], serial.table[columns], check_exact=True)
    assert cluster["worker"].nunique() >= 1 and (cluster["error"] == "").all()


def test_spin_up_monte_carlo_nominal_and_sensitivity(tmp_path):
    from flexmb.validation.spin_up import SpinUpBeam, simulate

    study, module = script("spin_up_monte_carlo")
    run = module.run
    nominal = run({"EI": 14000.0, "rho_A": 1.2})
    # the nominal sample is the validation case spin-up-simo (its data, here at 8 elements, dt = 0.01 s)
    simo = SpinUpBeam(case="spin-up-simo", length=10.0, EA=2.8e7, EI=14000.0, rho_A=1.2, rho_I=6e-4, omega_s=6.0,
                      t_s=15.0, reference={4: -0.5739}, converged=-0.57384, figure_source="Fig. 4")
    direct = simulate(simo, module.ELEMENTS, module.DT)
    assert nominal["residual_amplitude"] == pytest.approx(direct.amplitude, rel=1e-12)
    assert nominal["extreme"] == pytest.approx(direct.extreme, rel=1e-12)
    assert abs(nominal["residual_amplitude"] / 0.00365 - 1.0) < 0.2, nominal   # converged (Exudyn)
    assert abs(nominal["extreme"] / -0.57384 - 1.0) < 1e-2, nominal
    # EI, EA, rho A, rho I scaled together: the equations of motion are only divided by the factor
    scaled = run({"EI": 1.1 * 14000.0, "rho_A": 1.1 * 1.2})
    for q, v in nominal.items():
        assert scaled[q] == pytest.approx(v, rel=1e-7), f"{q}: {scaled[q]} vs {v} after a common scaling"
    # local sensitivity of the amplitude: a stiffer beam moves the residual frequency (4.51 rad/s)
    # towards the pulse spectrum's zero at 2 pi 11 / T_s = 4.61 rad/s, a heavier one away from it
    stiffer, heavier = run({"EI": 1.02 * 14000.0, "rho_A": 1.2}), run({"EI": 14000.0, "rho_A": 1.02 * 1.2})
    assert stiffer["residual_amplitude"] < nominal["residual_amplitude"] < heavier["residual_amplitude"]
    assert stiffer["residual_frequency"] > nominal["residual_frequency"] > heavier["residual_frequency"]

    result = study.run(out=tmp_path, serial=True, quick=True, progress=False)
    t = result.table
    assert len(t) == module.QUICK_SAMPLES and (t["error"] == "").all(), t["error"]
    from flexmb.studies.plots import sensitivity

    src = sensitivity(result)
    # the extreme (negative) lag grows with rho A / EI: positive coefficient on EI, negative on rho_A
    assert src.loc["extreme", "EI"] > 0.3 and src.loc["extreme", "rho_A"] < -0.3, src
    written = {p.name for p in result.write(tmp_path)}
    assert {"responses.png", "scatter_matrix.png", "sensitivity.png"} <= written


def test_cms_density_sweep_against_inverse_modification(tmp_path):
    study, module = script("cms_density_sweep")
    result = study.run(out=tmp_path, serial=True, quick=True, progress=False)
    t = result.table
    assert (t["error"] == "").all(), t["error"]
    f = t["frequency_cms"].to_numpy()
    assert np.all(np.diff(f) < 0.0), f"frequency not falling with density: {f}"
    # a density scaling keeps span(T): forward modification = CMS re-analysis to round-off
    np.testing.assert_allclose(t["frequency_forward"], f, rtol=1e-9)
    assert np.abs(t["cms_error"]).max() < 1e-5, t["cms_error"]
    # the inverse modification's density for TARGET_HZ lies on the swept curve; main draws the picture
    check = module.main(tmp_path)
    assert check["achieved_hz"] == pytest.approx(module.TARGET_HZ, rel=1e-8)
    assert abs(check["curve_rho_ratio"] - check["inverse_rho_ratio"]) < module.INVERSE_TOLERANCE, check
    assert (tmp_path / "density_sweep.png").stat().st_size > 0
    assert {"responses.png"} <= {p.name for p in result.write(tmp_path)}
