/* kfd_dispatch: the Linux peer's guest test client (milestone 5).
 *
 * Through /dev/kfd's ioctls alone (Linux 6.12's uapi kfd_ioctl.h), it
 * creates an AQL compute queue on the model's KFD node and completes one
 * kernel dispatch on it, as ROCR does on a real GPU:
 *   AMDKFD_IOC_GET_VERSION, AMDKFD_IOC_ACQUIRE_VM on the node's render
 *   node, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW for the GPUVM range,
 *   AMDKFD_IOC_ALLOC_MEMORY_OF_GPU + AMDKFD_IOC_MAP_MEMORY_TO_GPU for
 *   each buffer (GTT, mapped for the CPU through the render node at the
 *   returned mmap offset, as libhsakmt's fmm does),
 *   AMDKFD_IOC_CREATE_QUEUE (KFD_IOC_QUEUE_TYPE_COMPUTE_AQL), the
 *   process doorbell page mapped through /dev/kfd, one
 *   hsa_kernel_dispatch_packet_t (header stored last, with release),
 *   the 64-bit doorbell store of the packet's id, and a bounded poll of
 *   the completion signal's value (amd_signal_t: value at byte 8) from
 *   1 to 0; then AMDKFD_IOC_DESTROY_QUEUE.
 *
 * Buffer shapes follow kfd_queue_acquire_buffers(): the read and write
 * pointers each in a BO that starts at their page and is one page long
 * (here one page holds the whole amd_queue_t, read_dispatch_id at byte
 * 128 and write_dispatch_id at 56, as ROCR passes them); the ring BO
 * exactly the ring's size; the EOP BO the node's eop_buffer_size (4096
 * for gfx8 on, kfd_queue_ctx_save_restore_size()); ctl_stack_size equal
 * to the node's; the context-save BO (cwsr_size + debug_memory_size) x
 * num_xcc, page-aligned, with debug_memory_size = ALIGN(waves * 32, 64)
 * and waves per XCC as kfd_queue_ctx_save_restore_size() counts them.
 *
 * Usage: kfd_dispatch NODE KERNEL_IMAGE
 *   NODE: the KFD topology node (1 for the first GPU).
 *   KERNEL_IMAGE: a code object's loadable segments laid out at their
 *   virtual addresses, after an 8-byte little-endian header giving the
 *   kernel descriptor's offset in the image (written by `cargo xtask
 *   linux-peer`).
 * Prints lines starting "kfd dispatch: "; exits 0 only when the dispatch
 * completed. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/kfd_ioctl.h>

#define PAGE 4096ull
#define RING_BYTES 4096ull /* 64 packets */
#define WAIT_SECONDS 20

static int kfd = -1, drm = -1;
static uint32_t gpu_id;
static uint64_t next_va;

static void say(const char *what) { printf("kfd dispatch: %s\n", what); fflush(stdout); }

static void fail(const char *what) {
	printf("kfd dispatch: FAILED at %s: %s\n", what, strerror(errno));
	fflush(stdout);
	exit(1);
}

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* One 64-bit property of a topology node's `properties` file. */
static int node_prop(int node, const char *name, uint64_t *out) {
	char path[128], key[64];
	unsigned long long v;
	snprintf(path, sizeof path, "/sys/class/kfd/kfd/topology/nodes/%d/properties", node);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %llu", key, &v) == 2) {
		if (strcmp(key, name) == 0) {
			*out = v;
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return -1;
}

struct buf {
	uint64_t va, size, handle;
	void *cpu;
};

/* A GTT buffer at the next free GPU VA, mapped for the GPU and the CPU. */
static struct buf alloc_gtt(uint64_t size, int executable, const char *what) {
	struct buf b = {0};
	struct kfd_ioctl_alloc_memory_of_gpu_args a = {0};
	b.size = align_up(size, PAGE);
	b.va = next_va;
	/* A guard page between buffers keeps each BO its own mapping. */
	next_va += align_up(b.size + PAGE, 1ull << 16);
	a.va_addr = b.va;
	a.size = b.size;
	a.gpu_id = gpu_id;
	a.flags = KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |
		  KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE | KFD_IOC_ALLOC_MEM_FLAGS_COHERENT |
		  KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED;
	if (executable)
		a.flags |= KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE;
	if (ioctl(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a))
		fail(what);
	b.handle = a.handle;
	struct kfd_ioctl_map_memory_to_gpu_args m = {0};
	m.handle = b.handle;
	m.device_ids_array_ptr = (uint64_t)(uintptr_t)&gpu_id;
	m.n_devices = 1;
	if (ioctl(kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &m) || m.n_success != 1)
		fail(what);
	b.cpu = mmap(NULL, b.size, PROT_READ | PROT_WRITE, MAP_SHARED, drm, a.mmap_offset);
	if (b.cpu == MAP_FAILED)
		fail(what);
	memset(b.cpu, 0, b.size);
	return b;
}

/* hsa_kernel_dispatch_packet_t (HSA spec 2.9.6). */
struct dispatch {
	uint16_t header, setup;
	uint16_t wg_x, wg_y, wg_z, reserved0;
	uint32_t grid_x, grid_y, grid_z;
	uint32_t private_segment_size, group_segment_size;
	uint64_t kernel_object, kernarg_address, reserved2, completion_signal;
};

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: kfd_dispatch NODE KERNEL_IMAGE\n");
		return 2;
	}
	int node = atoi(argv[1]);
	uint64_t minor, cwsr, ctl_stack, simd_count, simd_per_cu, num_xcc = 1, gfx;
	{
		char path[128];
		snprintf(path, sizeof path, "/sys/class/kfd/kfd/topology/nodes/%d/gpu_id", node);
		FILE *f = fopen(path, "r");
		unsigned v = 0;
		if (!f || fscanf(f, "%u", &v) != 1)
			fail("reading the node's gpu_id");
		fclose(f);
		gpu_id = v;
	}
	if (node_prop(node, "drm_render_minor", &minor) || node_prop(node, "cwsr_size", &cwsr) ||
	    node_prop(node, "ctl_stack_size", &ctl_stack) ||
	    node_prop(node, "simd_count", &simd_count) ||
	    node_prop(node, "simd_per_cu", &simd_per_cu) ||
	    node_prop(node, "gfx_target_version", &gfx))
		fail("reading the node's properties");
	node_prop(node, "num_xcc", &num_xcc);
	if (num_xcc == 0)
		num_xcc = 1;

	FILE *kf = fopen(argv[2], "rb");
	if (!kf)
		fail("opening the kernel image");
	uint64_t kd_offset = 0;
	if (fread(&kd_offset, 8, 1, kf) != 1)
		fail("reading the kernel image");
	static unsigned char image[1 << 20];
	size_t image_len = fread(image, 1, sizeof image, kf);
	fclose(kf);
	if (image_len == 0 || kd_offset + 64 > image_len)
		fail("the kernel image is empty or has no descriptor");

	kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
	if (kfd < 0)
		fail("open /dev/kfd");
	struct kfd_ioctl_get_version_args ver = {0};
	if (ioctl(kfd, AMDKFD_IOC_GET_VERSION, &ver))
		fail("AMDKFD_IOC_GET_VERSION");
	printf("kfd dispatch: KFD ioctl %u.%u, node %d gpu_id %u gfx_target_version %llu\n",
	       ver.major_version, ver.minor_version, node, gpu_id, (unsigned long long)gfx);
	char render[64];
	snprintf(render, sizeof render, "/dev/dri/renderD%llu", (unsigned long long)minor);
	drm = open(render, O_RDWR | O_CLOEXEC);
	if (drm < 0)
		fail(render);
	struct kfd_ioctl_acquire_vm_args avm = {.drm_fd = (uint32_t)drm, .gpu_id = gpu_id};
	if (ioctl(kfd, AMDKFD_IOC_ACQUIRE_VM, &avm))
		fail("AMDKFD_IOC_ACQUIRE_VM");
	struct kfd_process_device_apertures ap[8];
	memset(ap, 0, sizeof ap);
	/* First the count (num_of_nodes 0), then at most that many: KFD
	 * refuses more than it has devices (kfd_ioctl_get_process_apertures_new()). */
	struct kfd_ioctl_get_process_apertures_new_args pa = {
		.kfd_process_device_apertures_ptr = (uint64_t)(uintptr_t)ap, .num_of_nodes = 0};
	if (ioctl(kfd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &pa))
		fail("AMDKFD_IOC_GET_PROCESS_APERTURES_NEW (count)");
	if (pa.num_of_nodes == 0 || pa.num_of_nodes > 8) {
		errno = ERANGE;
		fail("AMDKFD_IOC_GET_PROCESS_APERTURES_NEW (count)");
	}
	if (ioctl(kfd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &pa))
		fail("AMDKFD_IOC_GET_PROCESS_APERTURES_NEW");
	uint64_t base = 0, limit = 0;
	for (uint32_t i = 0; i < pa.num_of_nodes; i++)
		if (ap[i].gpu_id == gpu_id)
			base = ap[i].gpuvm_base, limit = ap[i].gpuvm_limit;
	if (limit == 0)
		fail("the node has no GPUVM aperture");
	/* Well inside the aperture, clear of the process's reserved pages at
	 * its start (the CWSR trap handler, kfd_process_device_init_cwsr_dgpu()). */
	next_va = align_up(base, 1ull << 30) + (1ull << 32);
	printf("kfd dispatch: GPUVM %#llx-%#llx, buffers from %#llx\n", (unsigned long long)base,
	       (unsigned long long)limit, (unsigned long long)next_va);

	struct buf ring = alloc_gtt(RING_BYTES, 0, "the ring");
	struct buf queue = alloc_gtt(PAGE, 0, "the queue descriptor");
	struct buf eop = alloc_gtt(4096, 0, "the EOP buffer");
	/* kfd_queue_ctx_save_restore_size(): waves per XCC are CUs x 32 from
	 * gfx10.1 on, min(CUs x 40, arrays / arrays per engine x 512) before. */
	uint64_t cus = simd_count / (simd_per_cu ? simd_per_cu : 1) / num_xcc;
	uint64_t waves = cus * 32;
	if (gfx < 100100) {
		uint64_t arrays = 0, per_engine = 0;
		if (node_prop(node, "array_count", &arrays) ||
		    node_prop(node, "simd_arrays_per_engine", &per_engine) || per_engine == 0)
			fail("reading the node's array counts");
		waves = cus * 40;
		if (arrays / per_engine * 512 < waves)
			waves = arrays / per_engine * 512;
	}
	uint64_t debug = align_up(waves * 32, 64);
	struct buf ctx = alloc_gtt((cwsr + debug) * num_xcc, 0, "the context-save area");
	struct buf code = alloc_gtt(image_len, 1, "the code");
	struct buf sig = alloc_gtt(PAGE, 0, "the signal and kernel arguments");
	memcpy(code.cpu, image, image_len);

	/* amd_queue_t (ROCR amd_hsa_queue.h): hsa_queue_t first, then the
	 * dispatch ids the CP follows; AMD_QUEUE_PROPERTIES_IS_PTR64. */
	unsigned char *q = queue.cpu;
	uint32_t type_multi = 0, features_dispatch = 1, slots = RING_BYTES / 64, props = 1u << 1;
	memcpy(q + 0, &type_multi, 4);
	memcpy(q + 4, &features_dispatch, 4);
	memcpy(q + 8, &ring.va, 8);
	memcpy(q + 24, &slots, 4);
	memcpy(q + 180, &props, 4);

	struct kfd_ioctl_create_queue_args cq = {0};
	cq.ring_base_address = ring.va;
	cq.ring_size = RING_BYTES;
	cq.gpu_id = gpu_id;
	cq.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
	cq.queue_percentage = 100;
	cq.queue_priority = 7;
	cq.write_pointer_address = queue.va + 56;
	cq.read_pointer_address = queue.va + 128;
	cq.eop_buffer_address = eop.va;
	cq.eop_buffer_size = 4096;
	cq.ctx_save_restore_address = ctx.va;
	cq.ctx_save_restore_size = (uint32_t)cwsr;
	cq.ctl_stack_size = (uint32_t)ctl_stack;
	if (ioctl(kfd, AMDKFD_IOC_CREATE_QUEUE, &cq))
		fail("AMDKFD_IOC_CREATE_QUEUE");
	printf("kfd dispatch: queue %u created, doorbell offset %#llx\n", cq.queue_id,
	       (unsigned long long)cq.doorbell_offset);
	uint64_t slice = 8192;
	void *bells = mmap(NULL, slice, PROT_READ | PROT_WRITE, MAP_SHARED, kfd,
			   cq.doorbell_offset & ~(slice - 1));
	if (bells == MAP_FAILED)
		fail("mapping the doorbell page");
	volatile uint64_t *bell = (volatile uint64_t *)((char *)bells + (cq.doorbell_offset & (slice - 1)));

	/* amd_signal_t: kind AMD_SIGNAL_KIND_USER (1), value 1. */
	int64_t kind = 1, one = 1;
	memcpy(sig.cpu, &kind, 8);
	memcpy((char *)sig.cpu + 8, &one, 8);
	struct dispatch d = {0};
	d.setup = 1;
	d.wg_x = 64, d.wg_y = 1, d.wg_z = 1;
	d.grid_x = 64, d.grid_y = 1, d.grid_z = 1;
	d.kernel_object = code.va + kd_offset;
	d.kernarg_address = sig.va + 256;
	d.completion_signal = sig.va;
	/* Body first, then the header (KERNEL_DISPATCH, barrier, system
	 * acquire and release fences) with release, then the id to the
	 * write pointer and the doorbell. */
	struct dispatch *slot = ring.cpu;
	memcpy((char *)slot + 2, (char *)&d + 2, sizeof d - 2);
	uint16_t header = 2 | 1u << 8 | 2u << 9 | 2u << 11;
	__atomic_store_n(&slot->header, header, __ATOMIC_RELEASE);
	__atomic_store_n((uint64_t *)(q + 56), 1, __ATOMIC_RELEASE);
	*bell = 0;
	say("packet 0 published, doorbell rung");

	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int64_t v = __atomic_load_n((int64_t *)((char *)sig.cpu + 8), __ATOMIC_ACQUIRE);
		uint64_t read = __atomic_load_n((uint64_t *)(q + 128), __ATOMIC_ACQUIRE);
		clock_gettime(CLOCK_MONOTONIC, &t);
		double s = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
		if (v == 0) {
			printf("kfd dispatch: completed: signal 0, read_dispatch_id %llu, after %.3f s\n",
			       (unsigned long long)read, s);
			break;
		}
		if (s > WAIT_SECONDS) {
			printf("kfd dispatch: FAILED: the signal is still %lld and read_dispatch_id %llu after %d s\n",
			       (long long)v, (unsigned long long)read, WAIT_SECONDS);
			fflush(stdout);
			return 1;
		}
		usleep(1000);
	}
	struct kfd_ioctl_destroy_queue_args dq = {.queue_id = cq.queue_id};
	if (ioctl(kfd, AMDKFD_IOC_DESTROY_QUEUE, &dq))
		fail("AMDKFD_IOC_DESTROY_QUEUE");
	say("queue destroyed");
	return 0;
}
