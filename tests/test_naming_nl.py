"""Names in Dutch catalogs: past participles (Het Normo ID04) and accents in property names."""

from __future__ import annotations

import pytest

from generator.naming import is_past_tense, past_tense, to_camel


@pytest.mark.parametrize(
    "word",
    ["ingediend", "gewijzigd", "verleend", "vastgesteld", "afgesloten", "ontvangen", "beeindigd", "geregistreerd",
     "uitgevoerd", "opgenomen", "aangemaakt", "ingetrokken", "verzonden", "gestart", "verwerkt"],
)
def test_dutch_past_participles_are_past_tense(word: str) -> None:
    assert is_past_tense(word)


@pytest.mark.parametrize(
    "verb, participle",
    [("indienen", "ingediend"), ("wijzigen", "gewijzigd"), ("verlenen", "verleend"), ("registreren", "geregistreerd"),
     ("stoppen", "gestopt"), ("leven", "geleefd"), ("melden", "gemeld"), ("afsluiten", "afgesloten"),
     ("intrekken", "ingetrokken"), ("opheffen", "opgeheven"), ("verwerken", "verwerkt"), ("beeindigen", "beeindigd"),
     ("vaststellen", "vastgesteld"), ("starten", "gestart")],
)
def test_dutch_verbs_get_dutch_participles(verb: str, participle: str) -> None:
    assert not is_past_tense(verb)
    assert past_tense(verb) == participle


@pytest.mark.parametrize(
    "verb, past", [("update", "updated"), ("open", "opened"), ("happen", "happened"), ("send", "sent"), ("submit", "submitted")]
)
def test_english_verbs_keep_english_suggestions(verb: str, past: str) -> None:
    assert past_tense(verb) == past


@pytest.mark.parametrize("word", ["forbidden", "spoken", "written", "created"])
def test_english_participles_in_en_are_past_tense(word: str) -> None:
    assert is_past_tense(word)


@pytest.mark.parametrize(
    "name, camel", [("reëleDatum", "reeleDatum"), ("geboorteplaats_één", "geboorteplaatsEen"), ("naïef_id", "naiefId")]
)
def test_camel_case_suggestions_transliterate_accents(name: str, camel: str) -> None:
    assert to_camel(name) == camel
