"""What counts as a copy of a forgotten memory's text (kenning/store/erase.py), piece by piece."""

from __future__ import annotations

from kenning.store.erase import Needles, norm, without


def needles(*texts: str) -> Needles:
    n = Needles()
    for t in texts:
        n.add(t)
    return n


def test_norm_folds_case_width_spaces_edges_and_speaker_prefixes() -> None:
    assert norm("  Always  DEPLOY with ｚａｎｚｉｂａｒ.  ") == "always deploy with zanzibar"
    assert norm('The user stated: "Use uv, not pip."') == "use uv, not pip"
    assert norm("User: Never touch api.py!") == "never touch api.py"
    assert norm("…") == ""


def test_a_summary_field_loses_only_its_copied_pieces_and_keeps_its_joins() -> None:
    n = needles("Always deploy with zanzibar from now on")
    assert without("Always deploy with zanzibar from now on; then: We use uv, not pip; Fix the CSV export", n) == \
        "We use uv, not pip; Fix the CSV export"
    assert without("Read the docs\nALWAYS deploy with Zanzibar from now on.\nRan the tests", n) == \
        "Read the docs\nRan the tests"
    assert without("Nothing to do with it; Done.", n) == "Nothing to do with it; Done."


def test_a_gist_cut_short_is_a_copy_but_a_short_common_piece_is_not() -> None:
    n = needles("Always deploy the billing service with zanzibar after the nightly freeze")
    assert without("Always deploy the billing service with zanz…; then: Done.", n) == "Done."
    assert without("Deploy; then: Done.", n) == "Deploy; then: Done."  # "deploy" is part of it, but short


def test_a_short_memory_text_matches_only_a_piece_equal_to_it() -> None:
    n = needles("Use uv")
    assert without("Use uv; then: use uvicorn for the server", n) == "use uvicorn for the server"
    assert not n.within("We use uvicorn for the server.")
    assert n.within("Ok. Use uv.")


def test_a_prompt_holds_a_copy_only_when_the_text_is_inside_it() -> None:
    n = needles("The tests run with nox on every push, since the tox config was dropped")
    assert n.within("Remember: the tests run with NOX on every push, since the tox config was dropped. Thanks")
    assert not n.within("Run the tests.")  # part of the memory's text, but not a copy of it
    assert not n.within("")
