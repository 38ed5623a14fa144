"""After a transactional test the database is left as Django's flush leaves it, by deleting only
what the test wrote (tests/emptying.py)."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test import TransactionTestCase

from audit.models import AccessLog
from tests import emptying
from tests.ctr_world import make_user

pytestmark = pytest.mark.django_db(transaction=True)


def rows_per_table() -> dict[str, int]:
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    with connection.cursor() as cursor:
        return {table: n for table, n in emptying._rows_per_table(cursor, tables).items() if n}


def registry() -> tuple[set, set]:
    return (
        set(ContentType.objects.values_list("app_label", "model")),
        set(Permission.objects.values_list("content_type__app_label", "codename")),
    )


def test_transactional_tests_are_emptied_this_way():
    assert TransactionTestCase._fixture_teardown is emptying._fixture_teardown


def test_every_table_is_emptied_but_the_registry_migrating_made():
    emptying.empty_database("default")  # the registry as post_migrate leaves it
    made_by_migrating = registry()
    user = make_user("emptied")
    # The access log refuses DELETE (audit/migrations/0002): emptied all the same.
    AccessLog.objects.create(user=user, username=user.username, purpose="teste")
    assert {"auth_user", "audit_accesslog"} <= rows_per_table().keys()

    assert emptying.empty_database("default") is True

    assert set(rows_per_table()) == set(emptying.REGISTRY_TABLES)
    assert registry() == made_by_migrating


def test_a_registry_the_test_changed_is_made_again():
    emptying.empty_database("default")
    made_by_migrating = registry()
    Permission.objects.filter(codename="view_accesslog").delete()
    ContentType.objects.create(app_label="stray", model="leftover")

    assert emptying.empty_database("default") is True

    assert registry() == made_by_migrating


def test_thousands_of_rows_are_left_to_djangos_truncate():
    user = make_user("many")
    AccessLog.objects.bulk_create(
        AccessLog(user=user, username=user.username, purpose="teste")
        for _ in range(emptying.MOST_ROWS_DELETED + 1)
    )

    assert emptying.empty_database("default") is False
    assert AccessLog.objects.count() == emptying.MOST_ROWS_DELETED + 1


def test_a_committed_world_leaves_the_rows_that_were_there_before():
    """emptying.as_it_was, around a world committed for a class of tests: what the block wrote
    goes, what the database held before (the rows the data migrations load, which the tests
    after it rely on) comes back, the registry included."""
    kept = make_user("before")
    AccessLog.objects.create(user=kept, username=kept.username, purpose="antes")
    before = rows_per_table()
    made_by_migrating = registry()

    with emptying.as_it_was("default"):
        make_user("during")
        ContentType.objects.create(app_label="stray", model="leftover")

    assert rows_per_table() == before
    assert registry() == made_by_migrating
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["before"]
    assert AccessLog.objects.get().purpose == "antes"
