"""TFRecord framing: round trip, CRC errors and truncation (event files)."""
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbtxt_scan._errors import PbtxtError
from pbtxt_scan.wire._tfrecord import crc32c, iter_records, read_record
from tests.support.tfrecord_writer import frame


def test_crc32c_check_value():
    # The standard CRC-32C check value (RFC 3720 B.4 / iSCSI).
    assert crc32c(b"123456789") == 0xE3069283


@settings(max_examples=50, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=8))
def test_round_trip(datas):
    f = io.BytesIO(b"".join(frame(d) for d in datas))
    records = list(iter_records(f))
    assert [read_record(f, r) for r in records] == datas


def test_bad_length_crc_names_offset():
    blob = bytearray(frame(b"one") + frame(b"two"))
    blob[len(frame(b"one")) + 8] ^= 1
    with pytest.raises(PbtxtError, match="offset %d: record 1: bad length CRC" % len(frame(b"one"))):
        list(iter_records(io.BytesIO(bytes(blob)), path="x"))


def test_bad_data_crc_names_offset():
    blob = bytearray(frame(b"one"))
    blob[12] ^= 1
    f = io.BytesIO(bytes(blob))
    (record,) = iter_records(f)
    with pytest.raises(PbtxtError, match="offset 0: record 0: bad data CRC"):
        read_record(f, record)


@pytest.mark.parametrize("cut", [1, 5, 12, 14])
def test_cut_short(cut):
    blob = frame(b"one") + frame(b"twotwo")
    with pytest.raises(PbtxtError, match="record 1 is cut short"):
        list(iter_records(io.BytesIO(blob[:-cut])))
