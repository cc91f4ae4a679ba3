"""The note Explore shows when a location-invariant mechanism (g-DPPCA) is scored on uncentred data."""

from __future__ import annotations

from dpcore.explain.statements import centring_note
from dpcore.mechanisms import get_mechanism, list_mechanisms


def test_only_g_dppca_is_location_invariant():
    assert [m.id for m in list_mechanisms() if m.location_invariant] == ["g_dppca"]


def test_the_note_appears_for_g_dppca_on_uncentred_data_only():
    mechs = [get_mechanism("analyze_gauss"), get_mechanism("g_dppca")]
    note = centring_note(mechs, "none")
    assert note is not None and note.startswith("g-DPPCA") and "centred covariance" in note and "Data page" in note
    assert centring_note(mechs, "public") is None and centring_note(mechs, "dp") is None
    assert centring_note([get_mechanism("analyze_gauss")], "none") is None
