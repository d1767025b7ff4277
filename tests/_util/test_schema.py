"""The schema helpers: errors in dealroom's words, text read as typed values."""

from typing import Annotated

import pytest
from pydantic import Field, ValidationError

from dealroom._util.schema import Schema, explain, field_reader, schema_dataclass
from dealroom.errors import InputError


class Table(Schema):
    """A record with bounds."""

    size: Annotated[int, Field(ge=1)] = 1
    """How many."""
    rate: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 1.0
    """How fast."""
    mode: Annotated[str, Field(pattern="^(a|b)$", json_schema_extra={"allowed": "a or b"})] = "a"
    """Which."""
    on: bool = True
    """Whether."""


def test_allowed_words_replace_a_pattern_and_a_positive_bound_reads_positive():
    with pytest.raises(InputError, match="^mode must be a or b, got 'c'$"):
        Table(mode="c")
    with pytest.raises(InputError, match="^rate must be a positive finite number, got inf$"):
        Table(rate=float("inf"))


def test_field_reader_reads_text_as_the_fields_types_with_their_bounds():
    reader = field_reader(Table, ("size", "on"), text=True)
    assert reader.model_validate({"size": "8", "on": "off"}).model_dump(exclude_unset=True) \
        == {"size": 8, "on": False}
    assert field_reader(Table, ("size", "on"), text=True) is reader, "built once"
    for given, expected in (({"size": "0"}, "size must be an integer of at least 1, got '0'"),
                            ({"size": "big"}, "size must be an integer, got 'big'"),
                            ({"rate": "2"}, "unknown option 'rate'; the options are size, on")):
        with pytest.raises(ValidationError) as err:
            reader.model_validate(given)
        assert explain(err.value, reader, key="option") == expected
    with pytest.raises(ValidationError):
        field_reader(Table).model_validate({"size": "8"})  # not text: strict


def test_a_schema_dataclass_is_a_dataclass_that_validates():
    import dataclasses

    @schema_dataclass
    class Settings:
        turns: Annotated[int, Field(ge=1)] = 3

    assert dataclasses.asdict(Settings(turns=4)) == {"turns": 4}
    with pytest.raises(InputError, match="^turns must be an integer of at least 1, got 0$"):
        dataclasses.replace(Settings(), turns=0)
    with pytest.raises(InputError, match="^unknown key 'days'; the keys are turns$"):
        Settings(days=1)
