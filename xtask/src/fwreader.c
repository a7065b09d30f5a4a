/*
 * barebell's independent firmware reader: reads each blob through Linux
 * 6.12's own struct definitions (amdgpu_ucode.h) and prints the common
 * header and the sections Linux would load, following the same driver
 * functions the Rust parser cites. xtask/src/fwcheck.rs compares this
 * output with barebell-firmware-if's, file by file.
 *
 * Input on stdin: lines "KIND PATH". Output per file:
 *   F PATH / H hdr ip ucode_version size ucode_size array_offset /
 *   S name offset size ... / P pc_start (RS64 CP and MES only) / E
 * The shim and #include are prepended by xtask.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long ull;

static void sec(const char *name, ull off, ull size, int always)
{
	if (size == 0 && !always)
		return;
	printf("S %s %llu %llu\n", name, off, size);
}

static const char *sos_names[] = {
	"unknown", "sos", "sys_drv", "kdb", "toc", "spl", "rl", "soc_drv",
	"intf_drv", "dbg_drv", "ras_drv", "ipkeymgr_drv",
};

static const char *ta_names[] = {
	"unknown", "asd", "xgmi", "ras", "hdcp", "dtm", "rap", "securedisplay",
};

static void legacy(const char *name, ull base, const struct psp_fw_legacy_bin_desc *d)
{
	sec(name, base + d->offset_bytes, d->size_bytes, 0);
}

static void read_one(const char *kind, const unsigned char *buf)
{
	const struct common_firmware_header *h = (const void *)buf;
	ull base = h->ucode_array_offset_bytes;
	unsigned maj = h->header_version_major, min = h->header_version_minor;

	printf("H %u.%u %u.%u %u %u %u %u\n", maj, min, h->ip_version_major,
	       h->ip_version_minor, h->ucode_version, h->size_bytes,
	       h->ucode_size_bytes, h->ucode_array_offset_bytes);

	if (!strcmp(kind, "gfx")) {
		if (maj == 1) {
			const struct gfx_firmware_header_v1_0 *g = (const void *)buf;
			if (g->jt_size == 0) {
				sec("ucode", base, h->ucode_size_bytes, 1);
			} else {
				sec("ucode", base, (ull)h->ucode_size_bytes - (ull)g->jt_size * 4, 1);
				sec("jt", base + (ull)g->jt_offset * 4, (ull)g->jt_size * 4, 1);
			}
		} else if (maj == 2) {
			const struct gfx_firmware_header_v2_0 *g = (const void *)buf;
			sec("ucode", base, g->ucode_size_bytes, 1);
			sec("data", g->data_offset_bytes, g->data_size_bytes, 0);
			printf("P %llu\n", (((ull)g->ucode_start_addr_hi << 32) | g->ucode_start_addr_lo) >> 2);
		}
	} else if (!strcmp(kind, "rlc")) {
		sec("ucode", base, h->ucode_size_bytes, 1);
		if (maj == 2) {
			const struct rlc_firmware_header_v2_0 *r = (const void *)buf;
			const struct rlc_firmware_header_v2_1 *r1 = (const void *)buf;
			const struct rlc_firmware_header_v2_2 *r2 = (const void *)buf;
			const struct rlc_firmware_header_v2_3 *r3 = (const void *)buf;
			const struct rlc_firmware_header_v2_4 *r4 = (const void *)buf;
			sec("reg_list_format", r->reg_list_format_array_offset_bytes, r->reg_list_format_size_bytes, 0);
			sec("reg_list", r->reg_list_array_offset_bytes, r->reg_list_size_bytes, 0);
			sec("reg_list_format_separate", r->reg_list_format_separate_array_offset_bytes, r->reg_list_format_separate_size_bytes, 0);
			sec("reg_list_separate", r->reg_list_separate_array_offset_bytes, r->reg_list_separate_size_bytes, 0);
			if (min >= 1) {
				sec("save_restore_list_cntl", r1->save_restore_list_cntl_offset_bytes, r1->save_restore_list_cntl_size_bytes, 0);
				sec("save_restore_list_gpm", r1->save_restore_list_gpm_offset_bytes, r1->save_restore_list_gpm_size_bytes, 0);
				sec("save_restore_list_srm", r1->save_restore_list_srm_offset_bytes, r1->save_restore_list_srm_size_bytes, 0);
			}
			if (min >= 2) {
				sec("rlc_iram", r2->rlc_iram_ucode_offset_bytes, r2->rlc_iram_ucode_size_bytes, 0);
				sec("rlc_dram", r2->rlc_dram_ucode_offset_bytes, r2->rlc_dram_ucode_size_bytes, 0);
			}
			if (min >= 3) {
				sec("rlcp", r3->rlcp_ucode_offset_bytes, r3->rlcp_ucode_size_bytes, 0);
				sec("rlcv", r3->rlcv_ucode_offset_bytes, r3->rlcv_ucode_size_bytes, 0);
			}
			if (min >= 4) {
				sec("global_tap_delays", r4->global_tap_delays_ucode_offset_bytes, r4->global_tap_delays_ucode_size_bytes, 0);
				sec("se0_tap_delays", r4->se0_tap_delays_ucode_offset_bytes, r4->se0_tap_delays_ucode_size_bytes, 0);
				sec("se1_tap_delays", r4->se1_tap_delays_ucode_offset_bytes, r4->se1_tap_delays_ucode_size_bytes, 0);
				sec("se2_tap_delays", r4->se2_tap_delays_ucode_offset_bytes, r4->se2_tap_delays_ucode_size_bytes, 0);
				sec("se3_tap_delays", r4->se3_tap_delays_ucode_offset_bytes, r4->se3_tap_delays_ucode_size_bytes, 0);
			}
		}
	} else if (!strcmp(kind, "mes")) {
		const struct mes_firmware_header_v1_0 *m = (const void *)buf;
		sec("ucode", m->mes_ucode_offset_bytes, m->mes_ucode_size_bytes, 1);
		sec("data", m->mes_ucode_data_offset_bytes, m->mes_ucode_data_size_bytes, 0);
		printf("P %llu\n", (((ull)m->mes_uc_start_addr_hi << 32) | m->mes_uc_start_addr_lo) >> 2);
	} else if (!strcmp(kind, "imu")) {
		const struct imu_firmware_header_v1_0 *m = (const void *)buf;
		sec("iram", base, m->imu_iram_ucode_size_bytes, 1);
		sec("dram", base + m->imu_iram_ucode_size_bytes, m->imu_dram_ucode_size_bytes, 0);
	} else if (!strcmp(kind, "sdma")) {
		if (maj == 1) {
			sec("ucode", base, h->ucode_size_bytes, 1);
		} else if (maj == 2) {
			const struct sdma_firmware_header_v2_0 *s = (const void *)buf;
			sec("ctx", base, s->ctx_ucode_size_bytes, 1);
			sec("ctl", s->ctl_ucode_offset, s->ctl_ucode_size_bytes, 1);
		} else if (maj == 3) {
			const struct sdma_firmware_header_v3_0 *s = (const void *)buf;
			sec("ucode", base, s->ucode_size_bytes, 1);
		}
	} else if (!strcmp(kind, "psp_sos")) {
		if (maj == 1) {
			const struct psp_firmware_header_v1_0 *p = (const void *)buf;
			const struct psp_firmware_header_v1_1 *p1 = (const void *)buf;
			const struct psp_firmware_header_v1_2 *p2 = (const void *)buf;
			const struct psp_firmware_header_v1_3 *p3 = (const void *)buf;
			sec("sys_drv", base, p->sos.offset_bytes, 0);
			sec("sos", base + p->sos.offset_bytes, p->sos.size_bytes, 0);
			if (min == 1) {
				legacy("toc", base, &p1->toc);
				legacy("kdb", base, &p1->kdb);
			} else if (min == 2) {
				legacy("kdb", base, &p2->kdb);
			} else if (min == 3) {
				legacy("toc", base, &p3->v1_1.toc);
				legacy("kdb", base, &p3->v1_1.kdb);
				legacy("spl", base, &p3->spl);
				legacy("rl", base, &p3->rl);
				legacy("sys_drv_aux", base, &p3->sys_drv_aux);
				legacy("sos_aux", base, &p3->sos_aux);
			}
		} else if (maj == 2) {
			const struct psp_firmware_header_v2_0 *p = (const void *)buf;
			const struct psp_firmware_header_v2_1 *p1 = (const void *)buf;
			const struct psp_fw_bin_desc *d = min == 1 ? p1->psp_fw_bin : p->psp_fw_bin;
			unsigned aux = min == 1 ? p1->psp_aux_fw_bin_index : ~0u;
			for (unsigned i = 0; i < p->psp_fw_bin_count; i++) {
				char name[40];
				const char *n = d[i].fw_type < PSP_FW_TYPE_MAX_INDEX ? sos_names[d[i].fw_type] : "unknown";
				snprintf(name, sizeof(name), "%s%s", n, i >= aux ? "_aux" : "");
				sec(name, base + d[i].offset_bytes, d[i].size_bytes, 0);
			}
		}
	} else if (!strcmp(kind, "psp_toc") || !strcmp(kind, "psp_asd")) {
		sec(kind + 4, base, h->ucode_size_bytes, 1);
	} else if (!strcmp(kind, "psp_ta")) {
		if (maj == 1) {
			const struct ta_firmware_header_v1_0 *t = (const void *)buf;
			sec("xgmi", base, t->xgmi.size_bytes, 0);
			legacy("ras", base, &t->ras);
			sec("hdcp", base, t->hdcp.size_bytes, 0);
			legacy("dtm", base, &t->dtm);
			legacy("securedisplay", base, &t->securedisplay);
		} else if (maj == 2) {
			const struct ta_firmware_header_v2_0 *t = (const void *)buf;
			for (unsigned i = 0; i < t->ta_fw_bin_count; i++) {
				const struct psp_fw_bin_desc *d = &t->ta_fw_bin[i];
				const char *n = d->fw_type < TA_FW_TYPE_MAX_INDEX ? ta_names[d->fw_type] : "unknown";
				sec(n, base + d->offset_bytes, d->size_bytes, 0);
			}
		}
	} else if (!strcmp(kind, "mc")) {
		const struct mc_firmware_header_v1_0 *m = (const void *)buf;
		sec("ucode", base, h->ucode_size_bytes, 1);
		sec("io_debug", m->io_debug_array_offset_bytes, m->io_debug_size_bytes, 0);
	} else if (!strcmp(kind, "dmcu")) {
		const struct dmcu_firmware_header_v1_0 *d = (const void *)buf;
		sec("eram", base, (ull)h->ucode_size_bytes - d->intv_size_bytes, 1);
		sec("intv", base + d->intv_offset_bytes, d->intv_size_bytes, 0);
	} else if (!strcmp(kind, "dmcub")) {
		const struct dmcub_firmware_header_v1_0 *d = (const void *)buf;
		sec("inst_const", base, d->inst_const_bytes, 1);
		sec("bss_data", base + d->inst_const_bytes, d->bss_data_bytes, 0);
	} else if (!strcmp(kind, "payload")) {
		sec("ucode", base, h->ucode_size_bytes, 1);
	} else if (!strcmp(kind, "gpu_info")) {
		sec("gpu_info", base, h->ucode_size_bytes, 1);
	} else if (!strcmp(kind, "vpe")) {
		const struct vpe_firmware_header_v1_0 *v = (const void *)buf;
		sec("ctx", base, v->ctx_ucode_size_bytes, 1);
		sec("ctl", v->ctl_ucode_offset, v->ctl_ucode_size_bytes, 1);
	} else if (!strcmp(kind, "umsch")) {
		const struct umsch_mm_firmware_header_v1_0 *u = (const void *)buf;
		sec("ucode", base, u->umsch_mm_ucode_size_bytes, 1);
		sec("data", u->umsch_mm_ucode_data_offset_bytes, u->umsch_mm_ucode_data_size_bytes, 0);
	} else if (!strcmp(kind, "smc")) {
		sec("ucode", base, h->ucode_size_bytes, 1);
		if (maj == 2 && min == 0) {
			const struct smc_firmware_header_v2_0 *s = (const void *)buf;
			sec("pptable", s->ppt_offset_bytes, s->ppt_size_bytes, 0);
		} else if (maj == 2 && min == 1) {
			const struct smc_firmware_header_v2_1 *s = (const void *)buf;
			const struct smc_soft_pptable_entry *e =
				(const void *)(buf + s->pptable_entry_offset);
			for (unsigned i = 0; i < s->pptable_count; i++) {
				char name[24];
				snprintf(name, sizeof(name), "pptable%u", i);
				sec(name, e[i].ppt_offset_bytes, e[i].ppt_size_bytes, 0);
			}
		}
	}
}

int main(void)
{
	char kind[64], path[4096];

	while (scanf("%63s %4095s", kind, path) == 2) {
		FILE *f = fopen(path, "rb");
		long len;
		unsigned char *buf;

		if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0) {
			fprintf(stderr, "%s: cannot read\n", path);
			return 1;
		}
		rewind(f);
		/* Headers are read as whole structs; pad so a short file cannot
		 * make this reader overrun (the Rust side rejects those). */
		buf = calloc(1, (size_t)len + sizeof(union amdgpu_firmware_header));
		if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
			fprintf(stderr, "%s: short read\n", path);
			return 1;
		}
		fclose(f);
		printf("F %s\n", path);
		read_one(kind, buf);
		printf("E\n");
		free(buf);
	}
	return 0;
}
