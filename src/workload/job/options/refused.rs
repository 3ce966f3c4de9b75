//! fio options iotrial knows but cannot honour, each with why: hardware it cannot reach from a
//! stack of loop, FUSE and filesystem layers, or machinery outside what a trial measures.

/// Why fio option `key` (with `value`) cannot be honoured, when iotrial knows it.
pub fn why(key: &str, _value: Option<&str>) -> Option<String> {
    let w: &str = match key {
        "fdp" | "fdp_pli" | "fdp_pli_select" | "dataplacement" | "plids" => {
            "it places data with NVMe Flexible Data Placement, which needs an FDP-capable NVMe device"
        }
        "md_per_io_size" | "pi_act" | "pi_chk" | "apptag" | "apptag_mask" => {
            "it uses NVMe end-to-end protection information (metadata per I/O), which needs an NVMe device formatted with it"
        }
        "atomic" => {
            "it asks for untorn writes (RWF_ATOMIC), which the stack's loop and FUSE devices do not offer"
        }
        "sprandom" | "spr_op" | "spr_num_regions" => {
            "SanDisk's SPRandom preconditioning is an option of fio releases after 3.33, which iotrial does not model"
        }
        "numa_cpu_nodes" | "numa_mem_policy" => {
            "iotrial does not bind its streams to NUMA nodes"
        }
        "cpus_allowed" | "cpus_allowed_policy" | "cpumask" => {
            "iotrial does not pin its streams to CPUs"
        }
        "client" | "server" | "remote_config" => "iotrial runs on the machine of its stack",
        _ => return None,
    };
    Some(w.to_string())
}
