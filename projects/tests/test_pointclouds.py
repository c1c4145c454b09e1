"""Point clouds read from KITTI .bin and PCD files (ascii and binary, fields in any order and
of any PCD type): the same (n, 4) x, y, z, intensity array whatever the file, points
without finite coordinates dropped, malformed files refused with a message about the file."""

import struct

import numpy as np
import pytest

from projects.pointclouds import decimate, parse_bin, parse_pcd, parse_points, read_points

POINTS = np.array(
    [[1.5, -2.0, 0.25, 0.5], [10.0, 20.0, -3.0, 0.0], [-0.125, 0.0, 7.75, 1.0]],
    dtype=np.float32,
)


def pcd(fields, sizes, types, body, *, data="ascii", counts=None, points=None, extra=""):
    """A PCD file: its header lines, then the body (text for ascii, bytes for binary)."""
    n = len(POINTS) if points is None else points
    header = (
        "# .PCD v0.7 - Point Cloud Data file format\n"
        "VERSION 0.7\n"
        f"FIELDS {' '.join(fields)}\n"
        f"SIZE {' '.join(map(str, sizes))}\n"
        f"TYPE {' '.join(types)}\n"
        f"COUNT {' '.join(map(str, counts or [1] * len(fields)))}\n"
        f"WIDTH {n}\nHEIGHT 1\nVIEWPOINT 0 0 0 1 0 0 0\n{extra}"
        f"POINTS {n}\nDATA {data}\n"
    ).encode()
    return header + (body.encode() if isinstance(body, str) else body)


def ascii_rows(rows) -> str:
    return "".join(" ".join(repr(float(v)) for v in row) + "\n" for row in rows)


# --------------------------------------------------------------------------- KITTI .bin


def test_bin_reads_four_float32_per_point():
    points = parse_bin(POINTS.astype("<f4").tobytes())
    assert points.dtype == np.float32 and points.shape == (3, 4)
    np.testing.assert_array_equal(points, POINTS)


def test_bin_is_little_endian_whatever_the_machine():
    raw = b"".join(struct.pack("<4f", *row) for row in POINTS.tolist())
    np.testing.assert_array_equal(parse_bin(raw), POINTS)


def test_bin_of_a_length_not_a_multiple_of_16_is_refused():
    with pytest.raises(ValueError, match="16 bytes per point.*49 bytes, not a multiple of 16"):
        parse_bin(POINTS.tobytes() + b"\x00")


def test_an_empty_bin_is_an_empty_cloud():
    assert parse_bin(b"").shape == (0, 4)


def test_bin_points_without_finite_coordinates_are_dropped():
    raw = POINTS.copy()
    raw[1, 2] = np.nan
    with_inf = np.vstack([raw, [[np.inf, 0, 0, 1]]]).astype("<f4")
    np.testing.assert_array_equal(parse_bin(with_inf.tobytes()), POINTS[[0, 2]])


def test_a_nan_intensity_reads_as_zero_and_keeps_the_point():
    raw = POINTS.copy()
    raw[0, 3] = np.nan
    points = parse_bin(raw.astype("<f4").tobytes())
    assert len(points) == 3 and points[0, 3] == 0.0


# --------------------------------------------------------------------------- PCD


def test_pcd_ascii_reads_x_y_z_intensity():
    data = pcd(["x", "y", "z", "intensity"], [4] * 4, ["F"] * 4, ascii_rows(POINTS))
    np.testing.assert_array_equal(parse_pcd(data), POINTS)


def test_pcd_binary_reads_x_y_z_intensity():
    body = POINTS.astype("<f4").tobytes()
    data = pcd(["x", "y", "z", "intensity"], [4] * 4, ["F"] * 4, body, data="binary")
    np.testing.assert_array_equal(parse_pcd(data), POINTS)


def test_pcd_fields_in_another_order_with_others_between():
    """Fields are found by name: here intensity first, a colour and a ring between them."""
    order = ["intensity", "rgb", "z", "ring", "x", "y"]
    columns = {"intensity": 3, "z": 2, "x": 0, "y": 1}
    rows = [
        [row[columns[f]] if f in columns else (7.0 if f == "rgb" else 3) for f in order]
        for row in POINTS.tolist()
    ]
    text = pcd(order, [4, 4, 4, 2, 4, 4], ["F", "F", "F", "U", "F", "F"], ascii_rows(rows))
    np.testing.assert_array_equal(parse_pcd(text), POINTS)
    record = np.dtype(
        [("i", "<f4"), ("rgb", "<f4"), ("z", "<f4"), ("ring", "<u2"), ("x", "<f4"), ("y", "<f4")]
    )
    table = np.zeros(len(POINTS), dtype=record)
    table["x"], table["y"], table["z"], table["i"] = POINTS.T
    table["ring"] = 3
    binary = pcd(
        order, [4, 4, 4, 2, 4, 4], ["F", "F", "F", "U", "F", "F"], table.tobytes(), data="binary"
    )
    np.testing.assert_array_equal(parse_pcd(binary), POINTS)


def test_pcd_without_intensity_reads_it_as_zero():
    body = POINTS[:, :3].astype("<f4").tobytes()
    points = parse_pcd(pcd(["x", "y", "z"], [4, 4, 4], ["F", "F", "F"], body, data="binary"))
    np.testing.assert_array_equal(points[:, :3], POINTS[:, :3])
    assert (points[:, 3] == 0).all()


@pytest.mark.parametrize(
    ("kind", "size", "numpy_type"),
    [("F", 8, "<f8"), ("I", 2, "<i2"), ("I", 4, "<i4"), ("U", 1, "<u1"), ("U", 4, "<u4")],
)
def test_pcd_binary_of_every_type(kind, size, numpy_type):
    whole = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [0, 9, 1, 200]])
    body = whole.astype(numpy_type).tobytes()
    data = pcd(["x", "y", "z", "intensity"], [size] * 4, [kind] * 4, body, data="binary")
    np.testing.assert_array_equal(parse_pcd(data), whole.astype(np.float32))


def test_pcd_field_with_a_count_above_one_spans_its_columns():
    """A normal of 3 values between x and y: y is read after it, in ascii and in binary."""
    rows = [[row[0], 9, 9, 9, row[1], row[2]] for row in POINTS.tolist()]
    fields, counts = ["x", "normal", "y", "z"], [1, 3, 1, 1]
    text = pcd(fields, [4] * 4, ["F"] * 4, ascii_rows(rows), counts=counts)
    binary = pcd(
        fields, [4] * 4, ["F"] * 4, np.array(rows, "<f4").tobytes(), data="binary", counts=counts
    )
    for data in (text, binary):
        np.testing.assert_array_equal(parse_pcd(data)[:, :3], POINTS[:, :3])


def test_pcd_nan_points_are_dropped():
    text = ascii_rows(POINTS).replace("10.0 20.0", "nan 20.0")
    points = parse_pcd(pcd(["x", "y", "z", "intensity"], [4] * 4, ["F"] * 4, text))
    np.testing.assert_array_equal(points, POINTS[[0, 2]])


def test_pcd_without_count_reads_one_value_per_field():
    data = pcd(["x", "y", "z", "intensity"], [4] * 4, ["F"] * 4, ascii_rows(POINTS))
    data = data.replace(b"COUNT 1 1 1 1\n", b"")
    np.testing.assert_array_equal(parse_pcd(data), POINTS)


def test_pcd_binary_compressed_is_refused_saying_what_to_do():
    data = pcd(["x", "y", "z"], [4] * 3, ["F"] * 3, b"\x00" * 64, data="binary_compressed")
    with pytest.raises(ValueError, match="binary_compressed is not supported.*DATA binary"):
        parse_pcd(data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"hello\x00world", "no DATA line"),
        (b"\xff\xfeFIELDS x\n", "not plain text"),
        (pcd(["x", "y"], [4, 4], ["F", "F"], "1 2\n", points=1), "FIELDS has no z"),
        (pcd(["x", "y", "z"], [4, 4], ["F", "F", "F"], "1 2 3\n", points=1), "SIZE must give"),
        (pcd(["x", "y", "z"], [4, 4, 4], ["F", "F"], "1 2 3\n", points=1), "TYPE must give"),
        (pcd(["x", "y", "z"], [4, 4, 3], ["F"] * 3, "1 2 3\n", points=1), "TYPE F and SIZE 3"),
        (pcd(["x", "y", "z"], [4] * 3, ["F"] * 3, "1 2 3\n", points=2), "announces 2 points"),
        (
            pcd(["x", "y", "z"], [4] * 3, ["F"] * 3, "1 2 x\n", points=1),
            "line 1: .x. is not a number",
        ),
        (
            pcd(["x", "y", "z"], [4] * 3, ["F"] * 3, b"\x00" * 20, data="binary", points=2),
            "announces 2 points of 12 bytes",
        ),
        (pcd(["x", "y", "z"], [4] * 3, ["F"] * 3, "1 2 3\n", data="xml"), "ascii or binary"),
        (
            pcd(["x", "y", "z"], [4] * 3, ["F"] * 3, "1 2 3\n4 5\n", points=2),
            "data line 2 has 2 values where the first line has 3",
        ),
        (pcd(["x", "x", "z"], [4] * 3, ["F"] * 3, "1 2 3\n", points=1), "named twice"),
    ],
)
def test_a_malformed_pcd_is_refused_saying_why(data, message):
    with pytest.raises(ValueError, match=message):
        parse_pcd(data)


# --------------------------------------------------------------------------- the rest


def test_read_points_chooses_the_reader_by_extension(tmp_path):
    (tmp_path / "scan.BIN").write_bytes(POINTS.tobytes())
    (tmp_path / "scan.pcd").write_bytes(
        pcd(["x", "y", "z", "intensity"], [4] * 4, ["F"] * 4, ascii_rows(POINTS))
    )
    np.testing.assert_array_equal(read_points(tmp_path / "scan.BIN"), POINTS)
    np.testing.assert_array_equal(read_points(tmp_path / "scan.pcd"), POINTS)
    with pytest.raises(ValueError, match=r"\.ply: a point cloud is a \.bin or a \.pcd file"):
        parse_points(b"", ".ply")


def test_decimate_keeps_points_spread_over_the_whole_cloud():
    cloud = np.arange(1000 * 4, dtype=np.float32).reshape(1000, 4)
    kept = decimate(cloud, 10)
    assert len(kept) == 10
    assert kept[0, 0] == cloud[0, 0] and kept[-1, 0] == cloud[-1, 0]
    steps = np.diff(kept[:, 0] / 4)
    assert steps.min() >= 110 and steps.max() <= 112  # even gaps of about 999 / 9
    assert decimate(cloud, 5000) is cloud


def test_read_points_thins_a_file_as_decimate_does(tmp_path):
    cloud = np.arange(1000 * 4, dtype="<f4").reshape(1000, 4)
    (tmp_path / "big.bin").write_bytes(cloud.tobytes())
    (tmp_path / "big.pcd").write_bytes(
        pcd(
            ["x", "y", "z", "intensity"],
            [4] * 4,
            ["F"] * 4,
            cloud.tobytes(),
            data="binary",
            points=1000,
        )
    )
    for name in ("big.bin", "big.pcd"):
        np.testing.assert_array_equal(read_points(tmp_path / name, 10), decimate(cloud, 10))
        np.testing.assert_array_equal(read_points(tmp_path / name, 5000), cloud)
    (tmp_path / "odd.bin").write_bytes(b"\x00" * 20)
    with pytest.raises(ValueError, match="20 bytes, not a multiple of 16"):
        read_points(tmp_path / "odd.bin", 10)
    (tmp_path / "empty.bin").write_bytes(b"")
    assert read_points(tmp_path / "empty.bin", 10).shape == (0, 4)
