/* hwmem: the memory hwloc reports (the machine, each NUMA node), in bytes:
 * what StarPU 1.4 takes 90% of as its main-memory cap unless told otherwise
 * (StarpuRuntime::start lifts that cap). Bundled by tools/device/bundle.sh
 * and run by run-relax.sh's `stall` probe beside /proc/meminfo and the
 * nodes' sysfs meminfo, to see what a freshly booted device VM reports. */
#include <hwloc.h>
#include <stdio.h>

int main(void) {
  hwloc_topology_t t;
  if (hwloc_topology_init(&t) != 0 || hwloc_topology_load(t) != 0) {
    fprintf(stderr, "hwmem: hwloc cannot load the topology\n");
    return 1;
  }
  printf("hwloc: machine total_memory %llu bytes\n", (unsigned long long)hwloc_get_root_obj(t)->total_memory);
  const int n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t o = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, i);
    printf("hwloc: NUMA node %u local_memory %llu bytes\n", o->os_index,
           (unsigned long long)o->attr->numanode.local_memory);
  }
  hwloc_topology_destroy(t);
  return 0;
}
