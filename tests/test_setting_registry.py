"""The registry filled from a setting of dotted paths (config/registry.py): lazy, ordered, reloaded when the setting
changes, and a clear configuration error for a path that names nothing."""
from dataclasses import dataclass

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from config.registry import SettingRegistry


@dataclass(frozen=True)
class Thing:
    name: str


ONE = Thing("one")
PAIR = (Thing("two"), Thing("three"))
NAMELESS = object()


@override_settings(TEST_THINGS=["tests.test_setting_registry.ONE", "tests.test_setting_registry.PAIR"])
def test_the_setting_names_objects_and_lists_of_them_in_order():
    registry = SettingRegistry("thing", "TEST_THINGS", LookupError)
    assert list(registry) == ["one", "two", "three"]
    assert registry.get_registered("two") is PAIR[0]
    with pytest.raises(LookupError, match="unknown thing 'four'; one of: one, two, three"):
        registry.get_registered("four")


def test_a_changed_setting_reloads_and_drops_what_was_registered_by_hand():
    with override_settings(TEST_THINGS=["tests.test_setting_registry.ONE"]):
        registry = SettingRegistry("thing", "TEST_THINGS")
        registry.register(Thing("by hand"))
        assert set(registry) == {"one", "by hand"}
        with override_settings(TEST_THINGS=["tests.test_setting_registry.PAIR"]):
            assert list(registry) == ["two", "three"]
        assert list(registry) == ["one"]


def test_registering_a_name_twice_is_refused():
    with override_settings(TEST_THINGS=["tests.test_setting_registry.ONE"]):
        registry = SettingRegistry("thing", "TEST_THINGS")
        with pytest.raises(ValueError, match="'one' registered twice"):
            registry.register(Thing("one"))


@pytest.mark.parametrize("path, message", [
    ("tests.test_setting_registry.MISSING", "cannot import 'tests.test_setting_registry.MISSING'"),
    ("tests.test_setting_registry.NAMELESS", "names no thing"),
])
def test_a_path_that_names_nothing_usable_is_a_configuration_error(path, message):
    with override_settings(TEST_THINGS=[path]):
        registry = SettingRegistry("thing", "TEST_THINGS")
        with pytest.raises(ImproperlyConfigured, match=message):
            list(registry)


def test_what_is_derived_from_the_entries_is_computed_once_until_they_change():
    computed = []

    def names():
        computed.append(1)
        return ",".join(registry)

    with override_settings(TEST_THINGS=["tests.test_setting_registry.ONE"]):
        registry = SettingRegistry("thing", "TEST_THINGS")
        assert registry.derived("names", names) == registry.derived("names", names) == "one"
        assert len(computed) == 1
        registry.register(Thing("by hand"))
        assert registry.derived("names", names) == "one,by hand"
        registry.unregister("by hand")
        assert registry.derived("names", names) == "one"
        with override_settings(TEST_THINGS=["tests.test_setting_registry.PAIR"]):
            assert registry.derived("names", names) == "two,three"
        assert registry.derived("names", names) == "one" and len(computed) == 5
