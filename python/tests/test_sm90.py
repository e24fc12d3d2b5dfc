"""symmtune._sm90's C layouts, which the driver reads (no GPU needed)."""

import ctypes

from symmtune import _sm90


def test_launch_config_matches_cuda_h():
    # CUlaunchConfig: seven unsigned ints, then CUstream, CUlaunchAttribute*, unsigned int.
    c = _sm90._LaunchConfig
    assert (c.grid.offset, c.block.offset, c.shared_mem_bytes.offset) == (0, 12, 24)
    assert (c.stream.offset, c.attrs.offset, c.num_attrs.offset) == (32, 40, 48)
    assert ctypes.sizeof(c) == 56


def test_tensor_map_is_64_byte_aligned():
    for _ in range(8):
        m = _sm90.TensorMap()
        assert m.address % 64 == 0
        assert ctypes.addressof(m._raw) <= m.address and m.address + 128 <= ctypes.addressof(m._raw) + ctypes.sizeof(m._raw)


def test_params_point_at_each_argument_with_its_size():
    m = _sm90.TensorMap()
    p = _sm90.Params().map(m).u64(0x1122334455667788)
    c = p.last()
    p.i32(-5)
    arr = p.array()
    assert len(arr) == 3 and arr[0] == m.address
    assert ctypes.c_uint64.from_address(arr[1]).value == 0x1122334455667788
    assert ctypes.c_int32.from_address(arr[2]).value == -5
    c.value = 42  # what a launcher changes between launches, seen through the same pointer
    assert ctypes.c_uint64.from_address(arr[1]).value == 42
