/* Every probe kind's ops, one per file in src/probes/. */
#ifndef LBAGENT_PROBE_KINDS_H
#define LBAGENT_PROBE_KINDS_H

#include "lbagent/probes/probe.h"

extern const struct probe_ops probe_http_ops;		/* probes/http.c */
extern const struct probe_ops probe_docker_ops;		/* probes/docker.c */
extern const struct probe_ops probe_tcp_ops;		/* probes/tcp.c */
extern const struct probe_ops probe_exec_ops;		/* probes/exec.c */
extern const struct probe_ops probe_disk_ops;		/* probes/disk.c */
extern const struct probe_ops probe_inodes_ops;		/* probes/disk.c */
extern const struct probe_ops probe_load_ops;		/* probes/load.c */
extern const struct probe_ops probe_cpu_ops;		/* probes/load.c */
extern const struct probe_ops probe_memory_ops;		/* probes/memory.c */
extern const struct probe_ops probe_swap_ops;		/* probes/memory.c */
extern const struct probe_ops probe_file_ops;		/* probes/file.c */
extern const struct probe_ops probe_process_ops;	/* probes/process.c */
extern const struct probe_ops probe_postgres_ops;	/* probes/postgres.c */
extern const struct probe_ops probe_mountpoint_ops;	/* probes/mountpoint.c */

#endif
