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


def test_kernel_node_params_match_cuda_h():
    # CUDA_KERNEL_NODE_PARAMS (v1): CUfunction, grid and block dims, shared bytes, kernelParams, extra.
    from symmtune import _graph
    p = _graph._KernelNodeParams
    assert (p.func.offset, p.grid.offset, p.block.offset, p.shared_mem_bytes.offset) == (0, 8, 20, 32)
    assert (p.kernel_params.offset, p.extra.offset, ctypes.sizeof(p)) == (40, 48, 56)


def test_node_params_of_a_launch():
    from symmtune import _graph
    m = _sm90.TensorMap()
    params = _sm90.Params().map(m).i32(7)
    launch = _sm90.Launcher.__new__(_sm90.Launcher)  # no driver: only what node_params reads
    launch._fn, launch._grid, launch._threads, launch._smem = ctypes.c_void_p(0x1234), 132, 384, 200000
    launch._params, launch._array = params, params.array()
    n = _graph._node_params(launch)
    assert (n.func, list(n.grid), list(n.block), n.shared_mem_bytes) == (0x1234, [132, 1, 1], [384, 1, 1], 200000)
    arr = ctypes.cast(n.kernel_params, ctypes.POINTER(ctypes.c_void_p))
    assert arr[0] == m.address and ctypes.c_int32.from_address(arr[1]).value == 7
