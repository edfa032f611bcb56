# jax.config: the flags shardscope honours (the rest are kept and ignored, as JAX's own config would store them).
import _shardscope


# The option names JAX defines (jax/_src/config.py and the modules that add flags), and ones older releases had:
# update() and attribute reads raise JAX's AttributeError for any other name.
_KNOWN_OPTIONS = frozenset({
    'jax_allow_f16_reductions', 'jax_array', 'jax_array_garbage_collection_guard', 'jax_auto_pcast',
    'jax_backend_target', 'jax_bcoo_cusparse_lowering', 'jax_captured_constants_report_frames',
    'jax_captured_constants_warn_bytes', 'jax_check_proxy_envs', 'jax_check_static_indices',
    'jax_check_tracer_leaks', 'jax_compilation_cache_check_contents', 'jax_compilation_cache_dir',
    'jax_compilation_cache_expect_pgle', 'jax_compilation_cache_include_metadata_in_key',
    'jax_compilation_cache_max_size', 'jax_compiler_detailed_logging_min_ops', 'jax_compiler_enable_remat_pass',
    'jax_cond', 'jax_coordination_service', 'jax_cpu_collectives_implementation', 'jax_cpu_enable_async_dispatch',
    'jax_cpu_enable_gloo_collectives', 'jax_cpu_get_global_topology_timeout_minutes',
    'jax_cpu_get_local_topology_timeout_minutes', 'jax_cross_host_transfer_socket_address',
    'jax_cross_host_transfer_timeout_seconds', 'jax_cross_host_transfer_transfer_size',
    'jax_cross_host_transport_addresses', 'jax_cuda_visible_devices', 'jax_custom_jvp3', 'jax_custom_vjp3',
    'jax_data_dependent_tracing_fallback', 'jax_debug_infs', 'jax_debug_key_reuse',
    'jax_debug_leaked_clients_on_clear_backends', 'jax_debug_log_modules', 'jax_debug_nans', 'jax_default_device',
    'jax_default_dtype_bits', 'jax_default_matmul_precision', 'jax_default_prng_impl', 'jax_disable_bwd_checks',
    'jax_disable_jit', 'jax_disable_most_optimizations', 'jax_disable_vmap_shmap_error',
    'jax_disallow_mesh_context_manager', 'jax_distributed_debug', 'jax_dump_ir_modes', 'jax_dump_ir_to',
    'jax_dynamic_shapes', 'jax_eager_pmap', 'jax_embedded_constants_max_bytes', 'jax_enable_checks',
    'jax_enable_compilation_cache', 'jax_enable_custom_prng', 'jax_enable_memories', 'jax_enable_mlir',
    'jax_enable_pgle', 'jax_enable_preemption_service', 'jax_enable_recoverability', 'jax_enable_x64',
    'jax_error_checking_behavior_divide', 'jax_error_checking_behavior_nan', 'jax_error_checking_behavior_oob',
    'jax_experimental_name_stack', 'jax_experimental_unsafe_xla_runtime_errors', 'jax_explain_cache_misses',
    'jax_explicit_x64_dtypes', 'jax_export_calling_convention_version', 'jax_export_deserialize_expired_versions',
    'jax_export_ignore_forward_compatibility', 'jax_force_dcn_cross_host_transfers', 'jax_high_dynamic_range_gumbel',
    'jax_hlo_source_file_canonicalization_regex', 'jax_include_debug_info_in_dumps',
    'jax_include_full_tracebacks_in_locations', 'jax_jit_pjit_api_merge', 'jax_legacy_prng_key',
    'jax_log_checkpoint_residuals', 'jax_log_compiles', 'jax_logging_level', 'jax_memory_fitting_level',
    'jax_mesh_context_manager_enabled', 'jax_mock_gpu_topology', 'jax_mosaic_allow_hlo', 'jax_mutable_array_checks',
    'jax_no_execution', 'jax_no_tracing', 'jax_num_cpu_devices', 'jax_num_generated_cases',
    'jax_numpy_dtype_promotion', 'jax_numpy_rank_promotion', 'jax_oneapi_visible_devices', 'jax_optimization_level',
    'jax_pallas_auto_assign_collective_ids', 'jax_pallas_enable_debug_checks', 'jax_pallas_poison_buffers',
    'jax_pallas_use_mosaic_gpu', 'jax_pallas_verbose_errors', 'jax_parallel_functions_output_gda',
    'jax_persistent_cache_enable_xla_caches', 'jax_persistent_cache_min_compile_time_secs',
    'jax_persistent_cache_min_entry_size_bytes', 'jax_pgle_aggregation_percentile', 'jax_pgle_profiling_runs',
    'jax_pjrt_client_create_options', 'jax_platform_name', 'jax_platforms', 'jax_pmap_no_rank_reduction',
    'jax_pmap_shmap_merge', 'jax_pprint_use_color', 'jax_ragged_dot_use_gpu_pallas_triton_lowering',
    'jax_ragged_dot_use_ragged_dot_instruction', 'jax_raise_on_ppermute_sort_diff',
    'jax_raise_persistent_cache_errors', 'jax_random_seed_offset', 'jax_remat3', 'jax_remat_barrier_no_cotangents',
    'jax_remove_custom_partitioning_ptr_from_cache_key', 'jax_remove_size_one_mesh_axis_from_type',
    'jax_rocm_visible_devices', 'jax_scan3', 'jax_send_traceback_to_runtime', 'jax_serialization_version',
    'jax_sharding_in_types', 'jax_share_binary_between_hosts', 'jax_share_binary_between_hosts_timeout_ms',
    'jax_skip_slow_tests', 'jax_softmax_custom_jvp', 'jax_sort_devices_by_process_index', 'jax_source_url_schema',
    'jax_spmd_mode', 'jax_test_dut', 'jax_test_num_threads', 'jax_test_with_persistent_compilation_cache',
    'jax_thread_guard', 'jax_threefry_gpu_kernel_lowering', 'jax_threefry_partitionable', 'jax_traceback_filtering',
    'jax_traceback_in_locations_limit', 'jax_tracer_error_num_traceback_frames', 'jax_transfer_guard',
    'jax_transfer_guard_device_to_device', 'jax_transfer_guard_device_to_host', 'jax_transfer_guard_host_to_device',
    'jax_use_cpp_shard_args', 'jax_use_direct_linearize', 'jax_use_emit_pipeline_primitive',
    'jax_use_hlo_logistic_lowering', 'jax_use_magma', 'jax_use_pjrt_c_api_on_tpu', 'jax_use_rgv3',
    'jax_use_shardy_partitioner', 'jax_use_simplified_jaxpr_constants', 'jax_xla_backend', 'jax_xla_profile_version'
})


# Options JAX removed, with the first release that no longer defines them (reading or setting one is then JAX's
# AttributeError, as for a name it never had).
_REMOVED_IN = {
    'jax_array': (0, 4, 14), 'jax_jit_pjit_api_merge': (0, 4, 14), 'jax_parallel_functions_output_gda': (0, 4, 26),
    'jax_enable_memories': (0, 5, 1), 'jax_sharding_in_types': (0, 5, 1), 'jax_eager_pmap': (0, 6, 0),
    'jax_spmd_mode': (0, 6, 1),
}


def _defined(name, values):
    if name in _REMOVED_IN and _shardscope.jax_version_info() >= _REMOVED_IN[name]:
        return False
    return name in _KNOWN_OPTIONS or name in values


# What JAX reads for an option nobody set (the context-manager options' defaults in jax/_src/config.py).
_DEFAULTS = {
    'jax_enable_x64': False, 'jax_threefry_partitionable': True, 'jax_platforms': None, 'jax_num_cpu_devices': -1,
    'jax_default_prng_impl': 'threefry2x32', 'jax_debug_nans': False, 'jax_debug_infs': False,
    'jax_disable_jit': False, 'jax_enable_checks': False, 'jax_check_tracer_leaks': False,
    'jax_enable_custom_prng': False, 'jax_log_compiles': False, 'jax_numpy_rank_promotion': 'allow',
    'jax2tf_associative_scan_reductions': False, 'jax_default_device': None, 'jax_numpy_dtype_promotion': 'standard',
    'jax_softmax_custom_jvp': False, 'jax_legacy_prng_key': 'allow', 'jax_debug_key_reuse': False,
    'jax_explain_cache_misses': False, 'jax_no_tracing': False, 'jax_no_execution': False,
    'jax_remove_size_one_mesh_axis_from_type': False, 'jax_thread_guard': False, 'jax_allow_f16_reductions': True,
    'jax_auto_pcast': True,
}

# Options whose other values make JAX behave differently in ways shardscope does not simulate (promotion errors,
# transfer guards, logging, key checks, other types): setting one to any other value raises NotImplementedError
# naming the option and the value, rather than storing it and running the program as if it were not set.
_SIMULATED_VALUES = {
    'jax_numpy_rank_promotion': ('allow',), 'jax_numpy_dtype_promotion': ('standard',),
    'jax_transfer_guard': (None, 'allow'), 'jax_transfer_guard_host_to_device': (None, 'allow'),
    'jax_transfer_guard_device_to_device': (None, 'allow'), 'jax_transfer_guard_device_to_host': (None, 'allow'),
    'jax_array_garbage_collection_guard': (None, 'allow'), 'jax_enable_custom_prng': (False,),
    'jax_legacy_prng_key': ('allow',), 'jax_no_tracing': (False,), 'jax_no_execution': (False,),
    'jax_remove_size_one_mesh_axis_from_type': (False,), 'jax_debug_key_reuse': (False,),
    'jax_log_compiles': (False,), 'jax_explain_cache_misses': (False,), 'jax_softmax_custom_jvp': (False,),
    'jax_allow_f16_reductions': (True,), 'jax_auto_pcast': (True,),
}


def _comparable(value):
    # Enum options take JAX's StrEnum members or their strings; booleans take any truthy value.
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return bool(value)
    return str(getattr(value, 'value', value))


def _check_simulated(name, value):
    if name == 'jax_default_device':
        _check_default_device(value)
        return
    accepted = _SIMULATED_VALUES.get(name)
    if accepted is not None and _comparable(value) not in accepted:
        raise NotImplementedError(f'{name}={value!r} is not supported by shardscope (it simulates '
                                  f'{" or ".join(repr(v) for v in accepted)})')


def _check_default_device(value):
    # Arrays are placed on the first device, so only that device (or its platform's name) is simulated.
    if value is None:
        return
    first = _shardscope.devices()[0]
    if isinstance(value, str):
        if value.lower() in (first.platform, {'cuda': 'gpu'}.get(first.platform, first.platform)):
            return
    elif value == first:
        return
    raise NotImplementedError(f'jax_default_device={value!r} is not supported by shardscope (arrays are placed on '
                              f'the first device, {first!r})')


class _Config:
    def __init__(self):
        self._values = dict(_DEFAULTS)

    def update(self, name, value):
        if not _defined(name, self._values):
            raise AttributeError(f"Unrecognized config option: {name}")
        _check_simulated(name, value)
        if name == 'jax_enable_x64':
            _shardscope.set_enable_x64(bool(value))
        elif name == 'jax_debug_nans':
            from jax._src import jit
            _shardscope.set_debug_nans(bool(value))
            jit.debug_nans[0] = bool(value)
        elif name == 'jax_debug_infs':
            from jax._src import jit
            _shardscope.set_debug_infs(bool(value))
            jit.debug_infs[0] = bool(value)
        elif name == 'jax_disable_jit':
            from jax._src import jit
            jit.disable_jit[0] = bool(value)
        elif name == 'jax_threefry_partitionable':
            _shardscope.set_threefry_partitionable(bool(value))
        elif name == 'jax_default_prng_impl' and value != 'threefry2x32':
            raise NotImplementedError(f"jax_default_prng_impl={value!r} is not supported by shardscope (only "
                                      "'threefry2x32')")
        elif name == 'jax_num_cpu_devices':
            # Only the CPU backend grows; on a TPU or GPU machine jax.devices() keeps the accelerators.
            if _shardscope.device_preset().startswith('cpu'):
                _shardscope.set_device_preset(f'cpu:{int(value)}')
        elif name == 'jax_platforms' and value and str(value).split(',')[0] == 'cpu':
            if not _shardscope.device_preset().startswith('cpu'):
                _shardscope.set_device_preset('cpu:1')
        self._values[name] = value

    def __getattr__(self, name):
        if _defined(name, vars(self).get('_values', {})):
            return self._values.get(name)
        if name.startswith('jax_'):
            raise AttributeError(f"Unrecognized config option: {name}")
        raise AttributeError(name)

    def read(self, name):
        if not _defined(name, self._values):
            raise AttributeError(f"Unrecognized config option: {name}")
        return self._values.get(name)


config = _Config()
update = config.update
