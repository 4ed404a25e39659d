"""The models' text forms (:mod:`gpuppdp.models.spec`): the command line's model options parsed
into models (:func:`gpuppdp.models.from_spec`) and a model rebuilt from its description
(:func:`gpuppdp.models.from_description`)."""

from __future__ import annotations

import pandas as pd
import pytest

from gpuppdp.engine.encoding import SchemaError
from gpuppdp.errors import InputError
from gpuppdp.hierarchy import Hierarchy
from gpuppdp.models import (
    SPEC_OPTIONS,
    AlphaKAnonymity,
    BetaLikeness,
    DeltaDisclosurePrivacy,
    DeltaPresence,
    DistinctLDiversity,
    EntropyLDiversity,
    KAnonymity,
    KAnonymityOnSubsets,
    KMap,
    LKCPrivacy,
    PrivacyLoss,
    RecursiveCLDiversity,
    TCloseness,
    from_description,
    from_spec,
    parse_spec,
    parsed_models,
)

TREE = Hierarchy([list("abcd"), ["ab", "ab", "cd", "cd"], ["*"] * 4], name="s-tree")
POPULATION = pd.DataFrame({"a": list("xyz")})

#: (option, text, the model it builds)
SPECS = [
    ("--k", "5", KAnonymity(5)),
    ("--l-diversity", "distinct:3", DistinctLDiversity("s", 3)),
    ("--l-diversity", "entropy:2.5@t", EntropyLDiversity("t", 2.5)),
    ("--l-diversity", "recursive:3,2", RecursiveCLDiversity("s", 3, 2)),
    ("--t-closeness", "equal:0.2", TCloseness("s", 0.2)),
    ("--t-closeness", "ordered:0.3@t", TCloseness("t", 0.3, "ordered")),
    ("--t-closeness", "hierarchical:0.25", TCloseness("s", 0.25, "hierarchical",
                                                      hierarchy=TREE)),
    ("--alpha-k", "0.5,5", AlphaKAnonymity("s", 0.5, 5)),
    ("--delta-disclosure", "1.2@t", DeltaDisclosurePrivacy("t", 1.2)),
    ("--beta-likeness", "basic:2", BetaLikeness("s", 2)),
    ("--beta-likeness", "enhanced:1.5", BetaLikeness("s", 1.5, enhanced=True)),
    ("--privacy-loss", "0.3,0.6", PrivacyLoss("s", 0.3, 0.6)),
    ("--lkc", "2,5,60%", LKCPrivacy(2, 5, 0.6, attribute="s")),
    ("--lkc", "2,5,0.6@t", LKCPrivacy(2, 5, 0.6, attribute="t")),
    ("--qid-set", "a,b", KAnonymityOnSubsets([["a", "b"]], 4)),
    ("--k-map", "3", KMap(3, population=POPULATION)),
    ("--delta-presence", "0.05,0.5", DeltaPresence(0.05, 0.5, population=POPULATION)),
]

CONTEXT = {"sensitive": ["s", "t"], "hierarchy": lambda name: TREE,
           "population": lambda: POPULATION, "k": 4}


@pytest.mark.parametrize("option,text,want", SPECS, ids=[f"{o} {t}" for o, t, _ in SPECS])
def test_spec_builds_the_model(option, text, want):
    got = from_spec(option, text, **CONTEXT)
    assert type(got) is type(want)
    assert got.describe() == want.describe()


@pytest.mark.parametrize("option,text,want", SPECS, ids=[f"{o} {t}" for o, t, _ in SPECS])
def test_spec_model_description_model(option, text, want):
    """spec -> model -> describe -> model: the same description (a description names its table
    parameters, the hierarchy and the population, which are passed again)."""
    model = from_spec(option, text, **CONTEXT)
    again = from_description(model.describe(), hierarchy=getattr(model, "hierarchy", None),
                             population=getattr(model, "population", None))
    assert type(again) is type(model)
    assert again.describe() == model.describe()


@pytest.mark.parametrize("model", [
    KAnonymity(3), DistinctLDiversity("s", 2), EntropyLDiversity("s", 1.7),
    RecursiveCLDiversity("s", 2.5, 3), TCloseness("s", 0.4), TCloseness("s", 0.1, "ordered"),
    AlphaKAnonymity("s", 0.4, 2, value="flu"), DeltaDisclosurePrivacy("s", 0.9),
    BetaLikeness("s", 1.0), BetaLikeness("s", 2.0, enhanced=True),
    PrivacyLoss("s", 0.2, 0.5, prior={"a": 0.5, "b": 0.5}), KAnonymityOnSubsets([["a"],
                                                                                 ["b", "c"]], 2),
    LKCPrivacy(2, 3, 1.0), LKCPrivacy(1, 2, 0.5, sensitive_values=["x"], attribute="s"),
], ids=repr)
def test_every_model_without_a_table_parameter_is_rebuilt_from_its_description(model):
    again = from_description(model.describe())
    assert type(again) is type(model)
    assert again.describe() == model.describe()
    assert repr(again) == repr(model)


def test_table_parameters_must_be_passed_again():
    with pytest.raises(InputError, match="population"):
        from_description(KMap(2, population=POPULATION).describe())
    with pytest.raises(InputError, match="s-tree"):
        from_description(TCloseness("s", 0.2, "hierarchical", hierarchy=TREE).describe())
    with pytest.raises(InputError, match="unknown model"):
        from_description({"model": "k-anonymousness", "k": 2})


#: the command line's messages for malformed model options
MALFORMED = [
    ("--l-diversity", "entropy:two",
     "--l-diversity expects distinct:L, entropy:L or recursive:C,L, optionally @COLUMN "
     "(e.g. distinct:3, entropy:2.5, recursive:3,2@disease), got 'entropy:two'"),
    ("--l-diversity", "recursive:3",
     "--l-diversity expects distinct:L, entropy:L or recursive:C,L, optionally @COLUMN "
     "(e.g. distinct:3, entropy:2.5, recursive:3,2@disease), got 'recursive:3'"),
    ("--t-closeness", "earth:0.2",
     "--t-closeness expects equal:T, ordered:T or hierarchical:T, optionally @COLUMN "
     "(e.g. equal:0.2), got 'earth:0.2'"),
    ("--beta-likeness", "strong:2",
     "--beta-likeness expects basic:B or enhanced:B, optionally @COLUMN, got 'strong:2'"),
    ("--alpha-k", "0.5", "--alpha-k expects ALPHA,K (e.g. 0.5,5), optionally @COLUMN, got '0.5'"),
    ("--delta-disclosure", "x",
     "--delta-disclosure expects DELTA (e.g. 1.2), optionally @COLUMN, got 'x'"),
    ("--privacy-loss", "0.3",
     "--privacy-loss expects EPSILON,ALPHA (e.g. 0.3,0.6), optionally @COLUMN, got '0.3'"),
    ("--lkc", "2,5", "--lkc expects L,K,C (e.g. 2,5,0.6 or 2,5,60%), optionally @COLUMN, "
     "got '2,5'"),
    ("--lkc", "2,5,lots", "--lkc expects L,K,C (e.g. 2,5,0.6 or 2,5,60%), optionally "
     "@COLUMN, got '2,5,lots'"),
    ("--delta-presence", "0.1", "--delta-presence expects DMIN,DMAX (e.g. 0.05,0.5), got '0.1'"),
    ("--qid-set", "a,,b",
     "--qid-set expects comma-separated quasi-identifiers COL,COL,..., got 'a,,b'"),
]


@pytest.mark.parametrize("option,text,message", MALFORMED, ids=[f"{o} {t}"
                                                                for o, t, _ in MALFORMED])
def test_malformed_specs_keep_the_command_lines_messages(option, text, message):
    with pytest.raises(InputError) as info:
        parse_spec(option, text)
    assert str(info.value) == message


def test_attribute_and_table_errors():
    with pytest.raises(SchemaError, match="^--alpha-k needs --sensitive COLUMN$"):
        from_spec("--alpha-k", "0.5,2")
    with pytest.raises(SchemaError, match="'nope', which is not given with --sensitive"):
        from_spec("--privacy-loss", "0.5,1@nope", sensitive=["s"])
    with pytest.raises(SchemaError, match="^--k-map needs --population FILE$"):
        from_spec("--k-map", "3")
    with pytest.raises(SchemaError, match="takes no @COLUMN"):
        from_spec("--delta-presence", "0.1,0.5@s", population=lambda: POPULATION)
    with pytest.raises(SchemaError, match="needs the hierarchy of 's'"):
        from_spec("--t-closeness", "hierarchical:0.2", sensitive=["s"])
    with pytest.raises(SchemaError, match="--qid-set needs --k"):
        from_spec("--qid-set", "a,b")
    with pytest.raises(InputError, match="not a model option"):
        parse_spec("--m", "2")
    assert set(SPEC_OPTIONS) >= {option for option, _, _ in SPECS}


def test_parsed_models_know_their_compiled_kind_before_the_table_is_read():
    specs = {"--k": 3, "--l-diversity": [parse_spec("--l-diversity", "distinct:2")],
             "--t-closeness": [parse_spec("--t-closeness", "ordered:0.2@t")],
             "--qid-set": [], "--k-map": [2], "--average-risk": [0.1]}
    got = [(m.option, m.compiled_kind, m.sensitive_attribute)
           for m in parsed_models(specs, ["s", "t"])]
    assert got == [("--k", "size", None), ("--l-diversity", "distinct", "s"),
                   ("--t-closeness", "t-closeness", "t"), ("--k-map", "k-map", None),
                   ("--average-risk", "average-risk", None)]
