/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: lib/bench's result reader (stress, perf-simple-query
 * and bench JSON through jsmn; HDR interval logs), then what report and
 * compare do with what it read.
 *
 * The input is a file's bytes: the first byte picks the name it is read
 * under (a.json or a.hdr: the reader tells them apart by content anyway).
 * Whatever it is, the read fails with a message or yields a run whose
 * every series and figure is within bounds; the HTML report of that run
 * is written (to /dev/null) and read back from a temporary file to the
 * same number of runs, and every figure compared with itself says "no
 * change" or n/a.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "sm_report_html.h"
#include "sm_result.h"
#include "sm_stats_compare.h"

static struct sm_result run, back[2];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256] = "", path[] = "/tmp/fuzz_result_XXXXXX";
	const struct sm_result *ptr[1] = { &run };
	unsigned i, k;
	int ret, fd;
	FILE *f;

	if (size == 0)
		return 0;
	sm_result_init(&run);
	ret = sm_result_read_text(&run, data[0] & 1 ? "a.hdr" : "a.json", (const char *)data + 1,
				  size - 1, err, sizeof(err));
	if (ret < 0) {
		FUZZ_CHECK(err[0] != 0 || ret == -ENOMEM);
		sm_result_fini(&run);
		return 0;
	}
	FUZZ_CHECK(run.nmetric <= SM_RESULT_MAX_METRICS && run.nseries <= SM_RESULT_MAX_SERIES);
	for (i = 0; i < run.nseries; i++) {
		const struct sm_result_series *s = &run.series[i];

		FUZZ_CHECK(s->off[0] == 0 && s->off[s->n] == s->nb);
		for (k = 0; k < s->n; k++)
			FUZZ_CHECK(s->off[k] <= s->off[k + 1]);
	}
	for (i = 0; i < run.nbars; i++)
		FUZZ_CHECK(run.bars[i].n <= SM_RESULT_MAX_SHARDS);
	for (i = 0; i < run.nmetric; i++) {
		struct sm_stats_cmp c;

		if (sm_stats_compare_metric(&run, &run.metric[i], &run, &run.metric[i], 0.99, 20, 1,
					    &c) < 0)
			continue;
		FUZZ_CHECK(c.verdict == SM_VERDICT_SAME || c.verdict == SM_VERDICT_NA);
	}
	fd = mkstemp(path);
	FUZZ_CHECK(fd >= 0);
	f = fdopen(fd, "w");
	FUZZ_CHECK(f != NULL);
	FUZZ_CHECK(sm_report_html_write(f, "fuzz", ptr, 1) == 0);
	fclose(f);
	ret = sm_report_html_read(path, back, 2, NULL, 0, err, sizeof(err));
	unlink(path);
	FUZZ_CHECK(ret == (run.nsrc > 0 ? 1 : 0));
	for (i = 0; i < (unsigned)ret; i++)
		sm_result_fini(&back[i]);
	sm_result_fini(&run);
	return 0;
}
