"""The suite's scheduler (tests/scheduling.py): a class's tests are one unit, any other test is
its own."""

from __future__ import annotations

from tests.scheduling import scope_of


def test_the_tests_of_a_class_are_one_unit():
    first = "tests/config/test_api_fuzz.py::TestEveryRoleOnOneWorld::test_api_fuzz[anonimo]"
    second = "tests/config/test_api_fuzz.py::TestEveryRoleOnOneWorld::test_api_fuzz[fiscal]"
    other = "tests/config/test_api_fuzz.py::TestTheOtherMunicipality::test_api_fuzz[nucleo_b]"
    assert (
        scope_of(first)
        == scope_of(second)
        == ("tests/config/test_api_fuzz.py::TestEveryRoleOnOneWorld")
    )
    assert scope_of(other) != scope_of(first)


def test_a_test_outside_a_class_is_its_own_unit():
    one = "tests/config/test_api_fuzz.py::test_api_boundary_values[anonimo]"
    two = "tests/config/test_api_fuzz.py::test_api_boundary_values[nucleo]"
    assert scope_of(one) == one
    assert scope_of(two) == two
