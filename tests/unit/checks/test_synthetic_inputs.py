"""Synthetic prompts: harmless fixed words picked by the seed, the same answer every time."""

from __future__ import annotations

from omniqual.checks.synthetic_inputs import synthetic_prompt


def test_a_prompt_has_the_asked_words_picked_by_the_seed() -> None:
    assert synthetic_prompt(3, 0) == "lighthouse tide gull"
    assert synthetic_prompt(0, 5) == synthetic_prompt(1, 5) == "gull"
    assert len(synthetic_prompt(48, 123).split()) == 48


def test_seeds_nine_apart_share_a_prompt_and_neighbours_do_not() -> None:
    for seed in (0, 1, 8, 2**31 - 1, -4):
        assert synthetic_prompt(8, seed) == synthetic_prompt(8, seed + 9)
        assert synthetic_prompt(8, seed) != synthetic_prompt(8, seed + 1)
