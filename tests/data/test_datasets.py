"""Every named dataset loads with the documented shape, classes and groups."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fedsec.data import Dataset, dataset_names, dataset_options, load, load_spec
from fedsec.errors import DataError, UnknownNameError, ValidationError

# name -> (n_samples, n_features, task, class counts in class-code order)
# Counts of the packaged files are those of the dataset README.
EXPECTED = {
    "iris": (150, 4, "multiclass", {"setosa": 50, "versicolor": 50, "virginica": 50}),
    "wine": (178, 13, "multiclass", {"class_0": 59, "class_1": 71, "class_2": 48}),
    "breast_cancer": (569, 30, "binary", {"malignant": 212, "benign": 357}),
    "digits": (1797, 64, "multiclass", None),
    "sonar": (208, 60, "binary", {"R": 97, "M": 111}),
    "ionosphere": (351, 34, "binary", {"b": 126, "g": 225}),
    "pima": (768, 8, "binary", {"0": 500, "1": 268}),
    "heart": (297, 13, "binary", {"0": 160, "1-4": 137}),
    "mnist5k": (5000, 784, "multiclass", {str(k): 500 for k in range(10)}),
    "fashion_mnist_1k": (1000, 784, "multiclass", {
        "T-shirt/top": 108, "Trouser": 89, "Pullover": 99, "Dress": 112, "Coat": 114,
        "Sandal": 83, "Shirt": 106, "Sneaker": 102, "Bag": 96, "Ankle boot": 91}),
    "mfeat": (2000, 649, "multiclass", {str(k): 200 for k in range(10)}),
    "nutrimouse": (40, 141, "binary", {"wt": 20, "ppar": 20}),
    "basic_motions": (80, 600, "multiclass",
                      {"Standing": 20, "Running": 20, "Walking": 20, "Badminton": 20}),
    "fedcg-toy": (12000, 3, "binary", None),
    "classification": (1000, 20, "binary", None),
    "keystrokes": (480, 850, "binary", None),
}


def test_every_name_is_covered_by_this_table():
    assert set(dataset_names()) == set(EXPECTED)
    assert list(dataset_names()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_named_dataset_has_documented_shape_and_classes(name):
    n_samples, n_features, task, counts = EXPECTED[name]

    ds = load(name)

    assert isinstance(ds, Dataset)
    assert ds.name == name
    assert ds.X.shape == (n_samples, n_features)
    assert ds.X.dtype == np.float64 and ds.y.dtype == np.int64
    assert ds.task == task
    assert len(ds.feature_names) == n_features
    if counts is not None:
        assert ds.describe()["classes"] == counts
        assert ds.class_names == tuple(counts)
    assert ds.source
    json.dumps(ds.describe())


@pytest.mark.parametrize("name", ["sonar", "mnist5k", "iris"])
def test_loaded_arrays_are_read_only_and_cache_stays_intact(name):
    first = load(name)
    before = first.X[0, 0]

    with pytest.raises(ValueError, match="read-only"):
        first.X[0, 0] = before + 1
    with pytest.raises(ValueError, match="read-only"):
        first.y[0] = 1

    assert load(name).X[0, 0] == before


def test_sonar_codes_mine_as_one():
    ds = load("sonar")
    assert ds.class_names == ("R", "M")
    assert ds.feature_names[0] == "f1" and ds.feature_names[-1] == "f60"
    assert float(ds.X.min()) >= 0.0 and float(ds.X.max()) <= 1.0


def test_ionosphere_keeps_constant_second_column():
    ds = load("ionosphere")
    assert np.all(ds.X[:, 1] == 0.0)


def test_pima_feature_names_come_from_the_header():
    ds = load("pima")
    assert ds.feature_names == (
        "Pregnancies", "Glucose", "BloodPressure", "SkinThickness", "Insulin", "BMI",
        "DiabetesPedigreeFunction", "Age",
    )


def test_heart_drops_the_six_incomplete_rows_and_says_so():
    ds = load("heart")
    assert ds.n_samples == 303 - 6
    assert "Dropped 6 of 303 rows" in ds.notes
    assert "ca in 4" in ds.notes and "thal in 2" in ds.notes
    assert ds.describe()["notes"] == ds.notes


def test_heart_num_target_is_five_class():
    ds = load("heart", target="num")
    assert ds.task == "multiclass"
    assert ds.describe()["classes"] == {"0": 160, "1": 54, "2": 35, "3": 35, "4": 13}
    np.testing.assert_array_equal(ds.y > 0, load("heart").y == 1)


@pytest.mark.parametrize("options", [{"missing": "mean"}, {"missing": None}, {"target": "x"}])
def test_heart_refuses_other_option_values(options):
    with pytest.raises(ValidationError, match="heart"):
        load("heart", **options)


def test_mnist_pixel_names_and_range():
    ds = load("mnist5k")
    assert ds.feature_names[:3] == ("px_0_0", "px_0_1", "px_0_2")
    assert ds.feature_names[-1] == "px_27_27"
    assert float(ds.X.min()) == 0.0 and float(ds.X.max()) == 255.0


def test_mfeat_views_are_ordered_feature_groups():
    ds = load("mfeat")
    sizes = {g: len(cols) for g, cols in ds.feature_groups.items()}
    assert sizes == {"fou": 76, "fac": 216, "kar": 64, "pix": 240, "zer": 47, "mor": 6}
    assert ds.feature_groups["fac"][0] == 76
    assert ds.feature_names[76] == "fac_0"
    # labels come in blocks of 200 in the source files
    np.testing.assert_array_equal(ds.y, np.repeat(np.arange(10), 200))


def test_mfeat_takes_any_subset_of_its_views_in_the_order_given():
    full = load("mfeat")
    three = load_spec("mfeat:views=zer+fou+mor")
    assert list(three.feature_groups) == ["zer", "fou", "mor"] and three.n_features == 129
    np.testing.assert_array_equal(three.X[:, :47], full.X[:, full.feature_groups["zer"]])
    assert three.name == "mfeat:views=zer+fou+mor"
    for bad in ("fou+fou", "fou+nope", ""):
        with pytest.raises(ValidationError, match="distinct view names"):
            load("mfeat", views=bad)


def test_tabular_sets_take_artificial_views_labelled_as_such():
    heart = load_spec("heart:views=artificial")
    assert list(heart.feature_groups) == ["history", "exercise_ecg", "imaging"]
    assert heart.feature_names[heart.feature_groups["imaging"][0]] == "ca"
    assert "Artificial views" in heart.notes and heart.name == "heart:views=artificial"
    assert sorted(c for g in load_spec("pima:views=artificial").feature_groups.values()
                  for c in g) == list(range(8))
    with pytest.raises(ValidationError, match="views"):
        load("heart", views="natural")


def test_nutrimouse_groups_and_targets():
    genotype = load("nutrimouse")
    diet = load("nutrimouse", target="diet")
    assert {g: len(c) for g, c in genotype.feature_groups.items()} == {"gene": 120, "lipid": 21}
    assert genotype.feature_names[0] == "X36b4" and genotype.feature_names[120] == "C14.0"
    assert diet.task == "multiclass"
    assert diet.describe()["classes"] == {c: 8 for c in ("coc", "fish", "lin", "ref", "sun")}
    np.testing.assert_array_equal(genotype.X, diet.X)


def test_sklearn_sets_keep_sklearn_feature_names():
    assert load("iris").feature_names[0] == "sepal length (cm)"
    assert load("digits").class_names == tuple(str(k) for k in range(10))


def test_unknown_name_lists_valid_names():
    with pytest.raises(UnknownNameError) as info:
        load("sonr")
    message = str(info.value)
    assert "'sonr'" in message
    for name in dataset_names():
        assert name in message
    assert info.value.valid == dataset_names()
    assert isinstance(info.value, KeyError)


def test_unknown_option_lists_accepted_options():
    with pytest.raises(ValidationError, match=r"'colour'.*Accepted options: target, missing"):
        load("heart", colour="red")
    with pytest.raises(ValidationError, match=r"Accepted options: \(none\)"):
        load("sonar", target="num")


def test_dataset_options_report_defaults():
    assert dataset_options("nutrimouse") == {"target": "genotype"}
    assert dataset_options("fedcg-toy") == {"seed": 0}
    assert set(dataset_options("classification")) == {
        "n_samples", "n_features", "n_informative", "n_classes", "n_groups", "seed",
    }
    with pytest.raises(UnknownNameError):
        dataset_options("nope")


def test_missing_csv_path_is_refused(tmp_path):
    with pytest.raises(DataError, match="No CSV file"):
        load(str(tmp_path / "absent.csv"))


def test_non_string_name_is_refused():
    with pytest.raises(ValidationError, match="'name' parameter of load"):
        load(3)


def test_one_vs_rest_spec_gives_the_papers_binary_tasks() -> None:
    iris = load_spec("iris:positive=setosa")
    assert iris.task == "binary" and iris.class_names == ("not-setosa", "setosa")
    assert iris.describe()["classes"] == {"not-setosa": 100, "setosa": 50}
    np.testing.assert_array_equal(iris.X, load("iris").X)
    wine = load_spec(" wine : positive=class_0 ")
    assert wine.name == "wine:positive=class_0" and int(wine.y.sum()) == 59


def test_spec_options_are_typed_and_checked() -> None:
    assert load_spec("heart:target=num").n_classes == 5
    assert load_spec("fedcg-toy:seed=3").n_samples == load("fedcg-toy", seed=3).n_samples
    with pytest.raises(ValidationError, match=r"has no class 'daisy'.*'setosa'"):
        load_spec("iris:positive=daisy")
    with pytest.raises(ValidationError, match="not of the form key=value"):
        load_spec("iris:positive")
    with pytest.raises(ValidationError, match="given twice"):
        load_spec("heart:target=num,target=presence")
    with pytest.raises(ValidationError, match="Accepted options"):
        load_spec("iris:colour=blue")
    with pytest.raises(ValidationError, match="must be a number"):
        load_spec("fedcg-toy:seed=abc")


def test_an_option_without_a_default_is_read_as_its_annotated_type():
    data = load_spec("classification:n_samples=120,n_features=4,n_informative=2")
    assert data.X.shape == (120, 4)
    with pytest.raises(ValidationError, match=r"n_informative.*must be a number"):
        load_spec("classification:n_informative=two")
