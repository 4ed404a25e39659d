"""ARX project files (.deid): read, run unchanged, hierarchies written back.

The projects are built here as ARX 3.9.2's GUI saves them: the zip entries and XML of
``org.deidentifier.arx.gui.worker.WorkerSave`` (``project.xml``, ``data/input.csv``,
``input/definition.xml``, ``input/config.xml``, ``input/hierarchies/NAME.csv``), the tag
names of its ``Vocabulary_V1`` (including ``assigment``), the tab indentation of its
``XMLWriter`` and the criteria's and metrics' ``toString()`` (ARX's ``criteria/*.java``,
``metric/v2/*.java``)."""

import json
import zipfile

import pandas as pd
import pytest

from gpuppdp import Anonymizer, datasets
from gpuppdp.arx_project import read_arx_project
from gpuppdp.cli.main import main
from gpuppdp.errors import InputError
from gpuppdp.hierarchy import Hierarchy
from gpuppdp.models import DistinctLDiversity

QIS = ["age", "sex", "race"]



def write_deid(path, data, types, hierarchy_files, criteria, metric, limit,
               weights=None, extra_definition=""):
    """A .deid as WorkerSave writes it (the Java-serialized entries left out: gpuppdp does
    not read them)."""
    project = ("<project>\n\t<name>test</name>\n\t<separator>;</separator>\n"
               "\t<escape>\"</escape>\n\t<quote>\"</quote>\n\t<linebreak>UNIX</linebreak>\n"
               "\t<description></description>\n\t<locale>EN</locale>\n</project>\n")
    definition = "<definition>\n"
    for name in data.columns:
        definition += (f"\t<assigment>\n\t\t<name>{name}</name>\n\t\t<type>{types[name]}</type>"
                       "\n\t\t<datatype>String</datatype>\n")
        if name in hierarchy_files:
            definition += (f"\t\t<ref>hierarchies/{name}.csv</ref>\n\t\t<min>All</min>\n"
                           "\t\t<max>All</max>\n")
        definition += extra_definition if name == "age" else ""
        definition += "\t</assigment>\n"
    definition += "</definition>\n"
    config = ("<config>\n\t<suppressionAlwaysEnabled>true</suppressionAlwaysEnabled>\n"
              "\t<suppressedAttributeTypes>\n\t\t<type>QUASI_IDENTIFYING_ATTRIBUTE</type>\n"
              "\t</suppressedAttributeTypes>\n\t<practicalMonotonicity>false"
              f"</practicalMonotonicity>\n\t<relativeMaxOutliers>{limit}</relativeMaxOutliers>"
              f"\n\t<metric>{metric}</metric>\n\t<attributeWeights>\n")
    for name, w in (weights or {}).items():
        config += (f"\t\t<attributeWeight>\n\t\t\t<attribute>{name}</attribute>\n"
                   f"\t\t\t<weight>{w}</weight>\n\t\t</attributeWeight>\n")
    config += "\t</attributeWeights>\n\t<criteria>\n"
    config += "".join(f"\t\t<criterion>{c}</criterion>\n" for c in criteria)
    config += "\t</criteria>\n</config>\n"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("metadata.xml", "<metadata>\n\t<version>3.9.2</version>\n"
                    "\t<vocabulary>2.0</vocabulary>\n</metadata>\n")
        zf.writestr("project.xml", project)
        zf.writestr("data/input.csv", data.to_csv(sep=";", index=False))
        zf.writestr("input/definition.xml", definition)
        zf.writestr("input/config.xml", config)
        for name, file in hierarchy_files.items():
            with open(file, encoding="utf-8") as fh:
                zf.writestr(f"input/hierarchies/{name}.csv", fh.read())


@pytest.fixture(scope="module")
def adult_part():
    data, _ = datasets.adult()
    return data[QIS + ["salary-class", "education"]].iloc[:400].reset_index(drop=True)


def adult_project(path, data, **kwargs):
    types = {c: "QUASI_IDENTIFYING_ATTRIBUTE" for c in QIS}
    types["salary-class"] = "SENSITIVE_ATTRIBUTE"
    types["education"] = "INSENSITIVE_ATTRIBUTE"
    files = {c: datasets.adult_path(f"adult_hierarchy_{c}.csv") for c in QIS}
    args = dict(criteria=["3-anonymity", "distinct-2-diversity for attribute 'salary-class'"],
                metric="Loss (0.3/0.3/0.7)", limit=0.05, weights={"age": 0.5, "sex": 0.5})
    args.update(kwargs)
    write_deid(path, data, types, files, **args)


def test_read_and_run_as_the_options_would(tmp_path, adult_part):
    deid = tmp_path / "p.deid"
    adult_project(deid, adult_part)
    project = read_arx_project(deid)
    assert project.unsupported == []
    assert project.roles == {"age": "qi", "sex": "qi", "race": "qi",
                             "salary-class": "sensitive", "education": "insensitive"}
    assert project.models == [("--k", "3"), ("--l-diversity", "distinct:2@salary-class")]
    assert (project.suppression_limit, project.metric, project.gs_factor) == (0.05, "loss", 0.3)
    pd.testing.assert_frame_equal(project.data, adult_part.astype(str))
    # the same run configured by hand
    want = Anonymizer(quasi_identifiers={c: Hierarchy.from_csv(
        datasets.adult_path(f"adult_hierarchy_{c}.csv")) for c in QIS},
        sensitive=["salary-class"], insensitive=["education"], k=3,
        models=[DistinctLDiversity("salary-class", 2)], suppression_limit=0.05,
        metric="loss", gs_factor=0.3, attribute_weights={"age": 0.5, "sex": 0.5},
        backend="cpu").fit(adult_part.astype(str))
    got = project.anonymizer(backend="cpu").fit(project.data)
    assert got.transformation == want.transformation
    assert got.information_loss == want.information_loss
    # the command line
    out, summary = tmp_path / "out.csv", tmp_path / "s.json"
    assert main(["anonymize", "--arx-project", str(deid), "--output", str(out), "--json",
                 str(summary), "--backend", "cpu", "--quiet"]) == 0
    s = json.loads(summary.read_text())
    assert s["transformation"] == dict(want.transformation)
    assert s["information_loss"] == want.information_loss
    released = pd.read_csv(out, sep=";", dtype=str)
    assert list(released.columns) == list(adult_part.columns)


def test_unsupported_settings(tmp_path, adult_part, capsys):
    deid = tmp_path / "p.deid"
    adult_project(deid, adult_part, criteria=["3-anonymity", "(0.1)-sample-uniqueness"],
                  metric="Monotonic precision", weights=None,
                  extra_definition="\t\t<microaggregationFunction>Arithmetic mean"
                                   "</microaggregationFunction>\n")
    project = read_arx_project(deid)
    assert len(project.unsupported) == 3
    assert "'(0.1)-sample-uniqueness'" in project.unsupported[1]
    assert project.metric == "loss" and project.models == [("--k", "3")]
    out = tmp_path / "out.csv"
    assert main(["anonymize", "--arx-project", str(deid), "--output", str(out),
                 "--backend", "cpu", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: ARX project setting not honoured") == 3
    assert main(["anonymize", "--arx-project", str(deid), "--output", str(out), "--strict"]) == 2
    assert "--strict: 3 setting(s)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["anonymize", "--arx-project", str(deid), "--output", str(out), "--k", "2"])
    assert "leave out --k" in capsys.readouterr().err


def test_hierarchies_round_trip(tmp_path, adult_part):
    deid = tmp_path / "p.deid"
    adult_project(deid, adult_part)
    project = read_arx_project(deid)
    for name in QIS:
        back = tmp_path / f"{name}.csv"
        project.hierarchies[name].to_csv(back)
        with open(datasets.adult_path(f"adult_hierarchy_{name}.csv"), encoding="utf-8") as fh:
            original = [line.rstrip("\r\n") for line in fh if line.strip()]
        assert back.read_text(encoding="utf-8").splitlines() == original
        again = Hierarchy.from_csv(back)
        assert [again.labels(lv).tolist() for lv in range(again.height + 1)] == \
            [project.hierarchies[name].labels(lv).tolist() for lv in range(again.height + 1)]


@pytest.mark.parametrize("content, match", [
    (b"not a zip", "zip"),
    (None, "no project.xml"),
])
def test_bad_files(tmp_path, content, match):
    path = tmp_path / "x.deid"
    if content is None:
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("data/input.csv", "a\n1\n")
    else:
        path.write_bytes(content)
    with pytest.raises(InputError, match=match):
        read_arx_project(path)
