/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/bench: HdrHistogram checked against the reference implementations'
 * own test expectations and against histograms and logs they encoded.
 * Sources of the expected numbers are cited at each test.
 */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "sm_hdr.h"
#include "sm_mem.h"

#define HOUR_US (INT64_C(3600) * 1000 * 1000)

/*
 * Interval 0 of jHiccup-2.0.7S.logV2.hlog, written by the Java reference
 * (HistogramLogWriter, DEFLATE best compression).
 */
#define JHICCUP_INTERVAL0                                                                          \
	"HISTFAAAAEV42pNpmSzMwMCgyAABTBDKT4GBgdnNYMcCBvsPEBEJISEuATEZMQ4uASkhIR4nrxg9v2lMaxhvMekI" \
	"L"                                                                                        \
	"GZkKmcCAEf2CsI="

/* A V1 encoding (word-size 2 counts), from hdrhistogram-go TestHistogram_Load_Errors. */
#define V1_ENCODED                                                                                 \
	"HISTIgAAAFd42pNpmazIwMAYxgABTBDKT4GBgdnNYMcCBvsPUBkeBkYGZqA8MwMbAzsDC5DFBCTZgJCDQY1BjkGL" \
	"QZ"                                                                                       \
	"RBlUEPCB8zWDCYMxgDZZkZhgJgHDibAY8JB/A="

/*
 * HdrHistogramJS test_files/jHiccup-with-basetime-2.0.7S.logV2.hlog: the 62
 * intervals of the reference's jHiccup-2.0.7S.logV2.hlog test log (as in
 * HdrHistogram_c's decode_v2_log and hdrhistogram-go's log tests) with a
 * BaseTime line added.
 */
/* clang-format off */
static const char jhiccup_log[] =
	"#[Logged with jHiccup version 2.0.7-SNAPSHOT]\n"
	"#[Histogram log format version 1.2]\n"
	"#[StartTime: 1441812279.474 (seconds since epoch), Wed Sep 09 08:24:39 PDT 2015]\n"
	"#[BaseTime: 1441812123.123 (seconds since epoch), Wed Sep 09 08:24:39 PDT 2015]\n"
	"\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n"
	"0.127,1.007,2.769,HISTFAAAAEV42pNpmSzMwMCgyAABTBDKT4GBgdnNYMcCBvsPEBEJISEuATEZMQ4uASkhIR4nrxg9v2lMaxhvMekILGZkKmcCAEf2CsI=\n"
	"1.134,0.999,0.442,HISTFAAAAEJ42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPEBEWLj45FTExAT4pBSEBKa6UkAgBi1uM7xjfMMlwMDABAC0CCjM=\n"
	"2.133,1.001,0.426,HISTFAAAAD942pNpmSzMwMAgwwABTBDKT4GBgdnNYMcCBvsPEBE+Ph4OLgk5OSkeIS4+LgEeswIDo1+MbmdYNASYAA51CSo=\n"
	"3.134,1.001,0.426,HISTFAAAAD942pNpmSzMwMAgwwABTBDKT4GBgdnNYMcCBvsPEBExPiEpITEFGTkRKSEeOR6FkCg1hTeMXvNYlHhYABQ5CTo=\n"
	"4.135,0.997,0.426,HISTFAAAAD942pNpmSzMwMAgwwABTBDKT4GBgdnNYMcCBvsPEBE2PiERBREpBREhER4+Hj4uvQAdrTlMBldYDDhYAAugCKk=\n"
	"5.132,1.002,0.426,HISTFAAAAEF42pNpmSzMwMAgywABTBDKT4GBgdnNYMcCBvsPEBEWPhElOR4pARUpKTkpGQkxq2mMegZnGI0+MZuIcAEAHo8Jvw==\n"
	"6.134,0.999,0.442,HISTFAAAAEF42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPEBEWIS4FITEhDiEJERE+GT6ZkhZGLbl7jEqrWHREmFgAIbAJMw==\n"
	"7.133,0.999,0.459,HISTFAAAAEJ42pNpmSzMwMCgwAABTBDKD8hndjPYsYDB/gNEhEtMQEBBTk5MQERCRkBEQEWlh9FJbg9jE+MS5ig1LhYmADkkCcE=\n"
	"8.132,1.000,0.459,HISTFAAAAEB42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPEBEWIREgEOIQEuGT4xHg41Oo0pIqu8LYwVImwMfGBAAfkgkw\n"
	"9.132,1.751,1551.892,HISTFAAAAJZ42pNpmSzMwMB0nQECmCCUnwIDA7ObwY4FDPYfYDJMXFxsbGwMbBwszDwsDDxsHFw6RWJMLJMZmcqBMJrJmskSiA2ZZJmkgRBCgmheIORGI1H5rEzMQAyDzFhY2EWRWUwMWCBxQtQQhAIWJiyAaEHyFbKwsLHAADYWAWmiFeKS5gACLsIEzdQICAgBIQShEfhFABXDF+M=\n"
	"10.883,0.250,0.426,HISTFAAAAD142pNpmSzMwMAgxQABTBDKT4GBgdnNYMcCBvsPEBEeFi4mPg4WLhY2BjY2FhYOBSkpASEtoRA+NgDkCQZR\n"
	"11.133,1.003,0.524,HISTFAAAAER42pNpmSzMwMCgyAABTBDKT4GBgdnNYMcCBvsPUBk2HgkZKREpEQUeGSEBAQ6xSYxhCnp7GJ02sWgJsbCwMgEAO0AJSQ==\n"
	"12.136,0.997,0.459,HISTFAAAAEB42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPUBk2AT4eCQURHgkuEREOHjERlSQhhWuMSV9Y7ERYWAAa4gko\n"
	"13.133,0.998,0.459,HISTFAAAAD942pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPMBkRIR4RMRk5KQE+PgEhMRmzEjWZJ4whW1hMBNiYAB42CTA=\n"
	"14.131,1.000,0.492,HISTFAAAAEN42pNpmSzMwMCgyAABTBDKT4GBgdnNYMcCBvsPUBkWFhE5GT4FKQkRCR4ZCREpqwmMBhpHGG16WHx42JgYmAA6swk+\n"
	"15.131,1.001,0.442,HISTFAAAAD542pNpmSzMwMAgywABTBDKT4GBgdnNYMcCBvsPMBkuMTEFHgklFRkRATkJERGdKgudfYwRTSwGalwAF2IJOw==\n"
	"16.132,1.001,0.524,HISTFAAAAEZ42pNpmSzMwMCgxAABTBDKT4GBgdnNYMcCBvsPEBE2IQEFCQkpGREpHj4hKS6NU4z7GDMkuBoYDSYw2wiwMLEyAQBQ3wne\n"
	"17.133,0.998,0.459,HISTFAAAAEB42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPUBk2DjElIR4RHiExKQE5IT61iCodtXWMdn0sKVJMTAAekAk0\n"
	"18.131,1.000,0.459,HISTFAAAAEF42pNpmSzMwMAgzwABTBDKT4GBgdnNYMcCBvsPUBkWISERJSUJESklHhEJEREhqwZGLakPjDZdLBYCHCwAKOkJPg==\n"
	"19.131,1.000,0.475,HISTFAAAAEF42pNpmSzMwMAgzwABTBDKT4GBgdnNYMcCBvsPUAk2HjkJBSk+Pi4BMT4xIQE9pxIluTOMPhtYbITY2JgAKLoJOQ==\n"
	"20.131,1.004,0.475,HISTFAAAAEF42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPEBFmPhEJOSEhDi4+ETEeASEhswIVi1+MFjtYvCRYGJgAIP8JNw==\n"
	"21.135,0.999,0.492,HISTFAAAAEB42pNpmSzMwMCgwAABTBDKD8hndjPYsYDB/gNMhk1AjINDRECAj4+Hi49LKS5CS2EGo1kXa4ANExMDEwAmOQil\n"
	"22.134,0.997,0.459,HISTFAAAAEB42pNpmSzMwMAgywABTBDKT4GBgdnNYMcCBvsPEBFmHhE+MRExCTEZAS4RMQERvRI1hSuMTidY3KQ4mAAXhgks\n"
	"23.131,1.004,0.508,HISTFAAAAEB42pNpmSzMwMCgwAABTBDKD8hndjPYsYDB/gNMhotHSEBASEyMg09MQUSIT6tKS2YKY8gfFj8tJmYmJgAsowkz\n"
	"24.135,0.998,0.492,HISTFAAAAEJ42pNpmSzMwMAgzwABTBDKT4GBgdnNYMcCBvsPEBEBLjkhETEpET4BISEhCR6FsqAQFY1jjBoTWPQEOJiZAC2aCUY=\n"
	"25.133,1.002,0.459,HISTFAAAAEB42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPUBkuHh4BITEpMSEpLiE5AS6FoAgdpQuMJk9YzMRYmAAdngk2\n"
	"26.135,0.998,0.508,HISTFAAAAER42pNpmSzMwMCgyAABTBDKT4GBgdnNYMcCBvsPUAkOKSEJKTUJOT4+IQkeIT69LYwVCnIbGI0eMZtJsTAxMwEAQvkJyg==\n"
	"27.133,0.998,0.442,HISTFAAAAEN42pNpmSzMwMAgzwABTBDKT4GBgdnNYMcCBvsPEBE2CQUZFTkZOSURKQkRMT6NKYwhbYxaOocY/a4xSUmwAQA4pQpb\n"
	"28.131,1.002,0.426,HISTFAAAAD942pNpmSzMwMAgwwABTBDKT4GBgdnNYMcCBvsPEBGtFDcHIy0jDQUdPjENFZUzjNNYHCT4uBQkzJiYADIGCcY=\n"
	"29.133,1.460,968.884,HISTFAAAAJZ42pNpmSzMwMDUwgABTBDKT4GBgdnNYMcCBvsPEBE5AwMDJSUFISk2ETYuAS6PQ0xSXCzsTEw7GZnKgdCTyZLJGog1maSZZIFYGkpLMnEz8QIhOolgcTKxAiEzmGRFYxMShbEYUCAalzRBsjSjARYmTIBNjDKFSIIsIMDGAgPYWJRJE1DIxQEEaAQHF2GCNDVsAE2dFJE=\n"
	"30.593,0.541,0.459,HISTFAAAAEB42pNpmSzMwMAgywABTBDKT4GBgdnNYMcCBvsPEBEFCxUNBRkFMTE+Pj4ZHgGHFYwGIkJcMiIpbEwMTAAdQQhJ\n"
	"31.134,0.997,0.737,HISTFAAAAER42pNpmSzMwMCgyAABTBDKT4GBgdnNYMcCBvsPEJGAHsYexqKaIAcPPRMVKTEhoR6mJUxqfBx8LFwCTOxM0kwAfR8KqA==\n"
	"32.131,1.002,0.508,HISTFAAAAEJ42pNpmSzMwMCgwAABTBDKD8hndjPYsYDB/gNEJKCDMcHJw8jOTUfNSEZGQuUb4x9GHxkJDg2hMA4WViYmAHWrC2k=\n"
	"33.133,1.000,0.426,HISTFAAAAD942pNpmSzMwMAgwwABTBDKT4GBgdnNYMcCBvsPEBGXGK8QHS09PRM9BRMxBa55jBOY03REhByE3DhYADicCkc=\n"
	"34.133,0.998,0.442,HISTFAAAAEB42pNpmSzMwMAgywABTBDKT4GBgdnNYMcCBvsPEBE1NzsfJwMVEw0pFS0hOZm4FqYKPy2FAoUJjFIsTAA/mQql\n"
	"35.131,1.000,0.459,HISTFAAAAEN42pNpmSzMwMAgzwABTBDKT4GBgdnNYMcCBvsPEBERMy0jPTk5LRUFJQk1GamYdUzHGO0UxIrUljBKsbEwAQBKXgqU\n"
	"36.131,1.001,0.557,HISTFAAAAEd42pNpmSzMwMCgygABTBDKT4GBgdnNYMcCBvsPEBExJzcNMyU5PRUpLSkJKYWwHqYWRjslkTKNC4wKHGwMTExArUwAi/IKnA==\n"
	"37.132,1.002,0.442,HISTFAAAAEJ42pNpmSzMwMAgzwABTBDKT4GBgdnNYMcCBvsPEBEFLRsVPQkTKTkhPT4ZBTm3V4yTGD20pFoYtZqYxESYAEjICok=\n"
	"38.134,1.000,0.803,HISTFAAAAEJ42pNpmSzMwMCgwAABTBDKD8hndjPYsYDB/gNERM7Hwk3LRslMSkZMQExDLGQL0yTGIC2pKJ1VjCwcTJpMAFufCso=\n"
	"39.134,0.997,0.492,HISTFAAAAEN42pNpmSzMwMCgyAABTBDKT4GBgdnNYMcCBvsPEBE5Oz8DPRsFORM5FQkNKaGCA8wtjCoSfBYSTYxCLEBtTABiWgor\n"
	"40.131,1.000,0.442,HISTFAAAAEF42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPEBExJQUNFTElFRUZBRUZDTGfJqYKHzmhHka5ZUwSQmwANK0J+g==\n"
	"41.131,1.002,0.475,HISTFAAAAEV42pNpmSzMwMCgyAABTBDKT4GBgdnNYMcCBvsPEBE2Hj45PiEFGSU5EQkpKREJuVmMLYwaWk8YQyYwa3CxMTABAEOgCdQ=\n"
	"42.133,1.000,0.459,HISTFAAAAD942pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPMBk+Lg4+ER4hMT4hIT4lLh69OAOZZ4wOr1hCpFiYABjUCSY=\n"
	"43.133,1.002,0.442,HISTFAAAAD942pNpmSzMwMAgwwABTBDKT4GBgdnNYMcCBvsPEBFmLgEJMTERHjEuCRERBSERoww5rRuMendYPFRYAA3tCTM=\n"
	"44.135,0.998,0.590,HISTFAAAAEJ42pNpmSzMwMAgzwABTBDKT4GBgdnNYMcCBvsPUBk+FT0lJTktJSUjOTE1OQGpmnOMdnorGF3WMemxCTIBAEAhCnU=\n"
	"45.133,0.998,0.442,HISTFAAAAEJ42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPEBEWMS0DIyMFOSsNPTEFMSGNA4x+LxidfOp0VjBKcLAAAECLCv4=\n"
	"46.131,1.004,0.442,HISTFAAAAEF42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPEBEuMS0VEyMlLSkzGQUJOSkJj6RnjE56WxjNWpik2JgAO34KfQ==\n"
	"47.135,0.996,0.475,HISTFAAAAEF42pNpmSzMwMCgwAABTBDKD8hndjPYsYDB/gNUgk2GR0ZOQkSAR4aLS0KKTyNtDqOWxjVGu2fMGlJMTEwANsIJvA==\n"
	"48.131,1.950,1803.551,HISTFAAAAKF42pNpmSzMwMD0mQECmCCUnwIDA7ObwY4FDPYfICKsTExMLCysLCxsbEwMTAIsDHIsWTwsbNsZmcqZKpncmayZLIFYnUmWSRoMIbQkEy8TNxQjkwgWJxMrGDJDaews/KIMKBCNSytBZCYqYGHCBNjEiBckoJAFBNhYYADBwipIhkIC0lwcQIBGcHARJqigBkwKCQgICSAIFA75IlwAeB8ZpQ==\n"
	"50.081,0.050,0.393,HISTFAAAADl42pNpmSzMwMAgxgABTBDKT4GBgdnNYMcCBvsPEBE2BiYWNiYWZiYGJiZmJg4OLiYuFiYWAMWGBSM=\n"
	"50.131,1.001,0.442,HISTFAAAAEF42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPEBE2Lj4VAQkuJT45KTkOKSExI68eRgeDvB2MfcxxckwAJD8JyA==\n"
	"51.132,0.999,0.459,HISTFAAAAEB42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPUBk2NgUFGSkNAQEeJSkuKSmxhAojhZADjKuYiyS4WAAlWgm/\n"
	"52.131,1.002,0.557,HISTFAAAAER42pNpmSzMwMCgxAABTBDKT4GBgdnNYMcCBvsPUBkWPjEFGSMZKQMJJSEhPgkJiyodjZIHjB+YSvh4mBiYWJkAVc8KVw==\n"
	"53.133,0.998,0.442,HISTFAAAAEJ42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPEBE2HjklJR0VPSUDHTUxJSkJs02MuxhtrLxKHjH6cbEAADjeCuw=\n"
	"54.131,1.003,0.442,HISTFAAAAEB42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPMBkNPzMLIw0NLQ0pFTERCTGLT4wpQSVbGFcwynExAQA/uwsC\n"
	"55.134,0.997,0.426,HISTFAAAAD942pNpmSzMwMAgywABTBDKT4GBgdnNYMcCBvsPUBkWFTUjCy01BQ0VFRUJGSkJjRamiqA5jHmXGIV4ACoyCmo=\n"
	"56.131,1.000,0.459,HISTFAAAAEF42pNpmSzMwMCgwAABTBDKD8hndjPYsYDB/gNUhk1FzsrAQElFQ0xCQkJOTEDnE6ObxwrGDsYuJjUODiYASN8KbA==\n"
	"57.131,1.000,0.459,HISTFAAAAEF42pNpmSzMwMAgzwABTBDKT4GBgdnNYMcCBvsPMBk5FT0JAzUNKTklKQ0FMaGUJ4wJFjcYk+4wqnAwMAEAQooK6Q==\n"
	"58.131,1.002,0.442,HISTFAAAAEB42pNpmSzMwMAgywABTBDKT4GBgdnNYMcCBvsPEBEuCRMNJwMlIzUtLR0ZMREZv6IHjFYGdUXLGE14WAA4OwsG\n"
	"59.133,0.998,0.442,HISTFAAAAEB42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPMBklExUdIwcdFRUlOTMZPhWXB4wBTssYsy4xKnGwAQA8bAry\n"
	"60.131,1.000,0.524,HISTFAAAAEJ42pNpmSzMwMAgxwABTBDKT4GBgdnNYMcCBvsPEBFmIRcjPR0bFR0lDSk5KQkZpXlMXkF5qxh3MMqIcDIBADy8CoE=\n"
	"61.131,1.000,26.083,HISTFAAAAF542pNpmSzMwMAQyAABTBDKT4GBgdnNYMcCBvsPMBkFHSMrCzEZLSUFCSkJOTmTf4xRQW2MYT8Y5diYdjIylTNVMrkzWTJZA7EmkzQYykJpSSZeJm4ghpAQFgATDg85\n";
/* clang-format on */

static bool
within(double actual, double expected, double rel)
{
	return fabs(actual - expected) <= fabs(expected) * rel;
}

/* HdrHistogram_c test_hdr_histogram.c load_histograms(): the "raw" histogram. */
static void
load_raw(struct sm_hdr *h)
{
	assert_int_equal(sm_hdr_init(h, 1, HOUR_US, 3), 0);
	assert_true(sm_hdr_record_n(h, 1000, 10000));
	assert_true(sm_hdr_record(h, 100000000));
}

static uint64_t
lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 11;
}

static void
assert_same_counts(const struct sm_hdr *a, const struct sm_hdr *b)
{
	assert_int_equal(a->counts_len, b->counts_len);
	assert_memory_equal(a->counts, b->counts, (size_t)a->counts_len * sizeof(int64_t));
	assert_int_equal(a->total_count, b->total_count);
	assert_int_equal(sm_hdr_min(a), sm_hdr_min(b));
	assert_int_equal(sm_hdr_max(a), sm_hdr_max(b));
}

static void
test_layout(void **state)
{
	struct sm_hdr h;

	(void)state;
	/* hdrh test_basic, HdrHistogram_c test_create: 1..3600e6 at 3 digits */
	assert_int_equal(sm_hdr_init(&h, 1, HOUR_US, 3), 0);
	assert_int_equal(h.bucket_count, 22);
	assert_int_equal(h.sub_bucket_count, 2048);
	assert_int_equal(h.counts_len, 23552);
	assert_int_equal(h.unit_magnitude, 0);
	assert_int_equal(h.sub_bucket_half_count_magnitude, 10);
	/* hdrh test_highest_equivalent_value and test_scaled_highest_equiv_value */
	assert_int_equal(sm_hdr_highest_equivalent(&h, 8180 * 1024), 8183 * 1024 + 1023);
	assert_int_equal(sm_hdr_highest_equivalent(&h, 8191 * 1024), 8191 * 1024 + 1023);
	assert_int_equal(sm_hdr_highest_equivalent(&h, 8193 * 1024), 8199 * 1024 + 1023);
	assert_int_equal(sm_hdr_highest_equivalent(&h, 9995 * 1024), 9999 * 1024 + 1023);
	assert_int_equal(sm_hdr_highest_equivalent(&h, 10007 * 1024), 10007 * 1024 + 1023);
	assert_int_equal(sm_hdr_highest_equivalent(&h, 10008 * 1024), 10015 * 1024 + 1023);
	assert_int_equal(sm_hdr_highest_equivalent(&h, 8180), 8183);
	assert_int_equal(sm_hdr_highest_equivalent(&h, 8191), 8191);
	assert_int_equal(sm_hdr_highest_equivalent(&h, 8193), 8199);
	assert_int_equal(sm_hdr_highest_equivalent(&h, 9995), 9999);
	assert_int_equal(sm_hdr_highest_equivalent(&h, 10007), 10007);
	assert_int_equal(sm_hdr_highest_equivalent(&h, 10008), 10015);
	sm_hdr_fini(&h);

	/* HdrHistogram_c test_invalid_init and test_invalid_significant_figures */
	assert_int_equal(sm_hdr_init(&h, 0, 64 * 1024, 2), -EINVAL);
	assert_int_equal(sm_hdr_init(&h, 80, 110, 5), -EINVAL);
	assert_int_equal(sm_hdr_init(&h, 1, 36000000, 0), -EINVAL);
	assert_int_equal(sm_hdr_init(&h, 1, 36000000, 6), -EINVAL);
	assert_null(h.counts);
	sm_hdr_fini(&h); /* harmless on a failed init */
}

static void
test_reference_percentiles(void **state)
{
	/* HdrHistogram Java HistogramDataAccessTest: the direct mean and standard deviation */
	const double raw_mean = (10000.0 * 1000 + 1.0 * 100000000) / 10001;
	const double raw_stddev = sqrt(
		(10000.0 * pow(1000.0 - raw_mean, 2) + pow(100000000.0 - raw_mean, 2)) / 10001);
	struct sm_hdr h;

	(void)state;
	load_raw(&h);
	/* HdrHistogram_c test_total_count, test_get_min_value, test_get_max_value */
	assert_int_equal(h.total_count, 10001);
	assert_int_equal(sm_hdr_min(&h), 1000);
	assert_int_equal(sm_hdr_lowest_equivalent(&h, sm_hdr_max(&h)),
			 sm_hdr_lowest_equivalent(&h, 100000000));
	/* HdrHistogram_c test_percentiles, within 0.1% as there */
	assert_true(within((double)sm_hdr_value_at_percentile(&h, 30.0), 1000.0, 0.001));
	assert_true(within((double)sm_hdr_value_at_percentile(&h, 99.0), 1000.0, 0.001));
	assert_true(within((double)sm_hdr_value_at_percentile(&h, 99.99), 1000.0, 0.001));
	assert_true(within((double)sm_hdr_value_at_percentile(&h, 99.999), 100000000.0, 0.001));
	assert_true(within((double)sm_hdr_value_at_percentile(&h, 100.0), 100000000.0, 0.001));
	/* and exactly: 1000 is below 2048, so exact; 1e8 lies in [1525 << 16, 1526 << 16) */
	assert_int_equal(sm_hdr_value_at_percentile(&h, 99.99), 1000);
	assert_int_equal(sm_hdr_value_at_percentile(&h, 99.999), (INT64_C(1526) << 16) - 1);
	assert_int_equal(sm_hdr_max(&h), (INT64_C(1526) << 16) - 1);
	/* Java HistogramDataAccessTest testGetMean/testGetStdDeviation: within 0.1% */
	assert_true(within(sm_hdr_mean(&h), raw_mean, 0.001));
	assert_true(within(sm_hdr_stddev(&h), raw_stddev, 0.001));
	/* HdrHistogram_c test_reset */
	sm_hdr_reset(&h);
	assert_int_equal(h.total_count, 0);
	assert_int_equal(sm_hdr_value_at_percentile(&h, 99.0), 0);
	assert_int_equal(sm_hdr_min(&h), 0);
	assert_int_equal(sm_hdr_max(&h), 0);
	assert_true(sm_hdr_mean(&h) == 0 && sm_hdr_stddev(&h) == 0);
	sm_hdr_fini(&h);

	/* hdrh test_mean_stddev: buckets counted at their median (3000 -> 3001) */
	assert_int_equal(sm_hdr_init(&h, 1, HOUR_US, 3), 0);
	sm_hdr_record(&h, 1000);
	sm_hdr_record(&h, 1000);
	sm_hdr_record(&h, 3000);
	sm_hdr_record(&h, 3000);
	assert_true(sm_hdr_mean(&h) == 2000.5);
	assert_true(sm_hdr_stddev(&h) == 1000.5);
	sm_hdr_fini(&h);
}

static void
test_large_values_and_rounding(void **state)
{
	struct sm_hdr h;

	(void)state;
	/* HdrHistogram_c test_create_with_large_values (2e7 and 3e7 share a bucket here) */
	assert_int_equal(sm_hdr_init(&h, 20000000, 100000000, 5), 0);
	sm_hdr_record(&h, 100000000);
	sm_hdr_record(&h, 20000000);
	sm_hdr_record(&h, 30000000);
	assert_int_equal(sm_hdr_lowest_equivalent(&h, sm_hdr_value_at_percentile(&h, 50.0)),
			 sm_hdr_lowest_equivalent(&h, 20000000));
	assert_int_equal(sm_hdr_lowest_equivalent(&h, sm_hdr_value_at_percentile(&h, 83.34)),
			 sm_hdr_lowest_equivalent(&h, 100000000));
	assert_int_equal(sm_hdr_lowest_equivalent(&h, sm_hdr_value_at_percentile(&h, 99.0)),
			 sm_hdr_lowest_equivalent(&h, 100000000));
	/*
	 * HdrHistogram_c also expects p83.33 ~ 3e7 (it rounds 2.4999 values to
	 * 2); the Java reference, followed here, rounds up to 3: only 66.7% of
	 * the values are at or below 3e7.
	 */
	assert_int_equal(sm_hdr_lowest_equivalent(&h, sm_hdr_value_at_percentile(&h, 83.33)),
			 sm_hdr_lowest_equivalent(&h, 100000000));
	sm_hdr_fini(&h);

	/* unit resolution: the value at p is the ceil(p * n / 100)-th smallest */
	assert_int_equal(sm_hdr_init(&h, 1, 1000, 3), 0);
	for (int v = 1; v <= 100; v++)
		sm_hdr_record(&h, v);
	assert_int_equal(sm_hdr_value_at_percentile(&h, 0), 1);
	assert_int_equal(sm_hdr_value_at_percentile(&h, 50), 50);
	assert_int_equal(sm_hdr_value_at_percentile(&h, 50.5), 51);
	assert_int_equal(sm_hdr_value_at_percentile(&h, 99), 99);
	assert_int_equal(sm_hdr_value_at_percentile(&h, 99.01), 100);
	assert_int_equal(sm_hdr_value_at_percentile(&h, 100), 100);
	assert_int_equal(sm_hdr_value_at_percentile(&h, 250), 100);
	sm_hdr_fini(&h);
}

static void
test_equivalence_clamp_reject(void **state)
{
	struct sm_hdr h;

	(void)state;
	assert_int_equal(sm_hdr_init(&h, 1, HOUR_US, 3), 0);
	/* values within the precision share a bucket; below 2048 every value is exact */
	assert_int_equal(sm_hdr_lowest_equivalent(&h, 8183 * 1024 + 1023), 8180 * 1024);
	assert_int_equal(sm_hdr_lowest_equivalent(&h, 8184 * 1024), 8184 * 1024);
	assert_int_equal(sm_hdr_lowest_equivalent(&h, 2047), 2047);
	assert_true(sm_hdr_record(&h, 8180 * 1024));
	assert_true(sm_hdr_record(&h, 8183 * 1024 + 1023));
	assert_int_equal(sm_hdr_count_at(&h, 8181 * 1024), 2);
	assert_int_equal(sm_hdr_count_at(&h, 8184 * 1024), 0);
	assert_int_equal(h.min, 8180 * 1024); /* the exact extremes are kept */
	assert_int_equal(h.max, 8183 * 1024 + 1023);
	/* zero is a value but not a minimum candidate; it makes min() 0 */
	assert_true(sm_hdr_record(&h, 0));
	assert_int_equal(h.min, 8180 * 1024);
	assert_int_equal(sm_hdr_min(&h), 0);
	sm_hdr_fini(&h);

	/* above highest: clamped to it and counted, not lost; negatives rejected */
	assert_int_equal(sm_hdr_init(&h, 1, 1000, 3), 0);
	assert_true(sm_hdr_record(&h, 1000));
	assert_true(sm_hdr_record(&h, 5000));
	assert_true(sm_hdr_record_n(&h, INT64_C(1) << 40, 3));
	assert_true(sm_hdr_record_n(&h, INT64_MAX, 1));
	assert_int_equal(h.overflow, 5);
	assert_int_equal(h.total_count, 6);
	assert_int_equal(sm_hdr_count_at(&h, 1000), 6);
	assert_int_equal(h.max, 1000);
	assert_int_equal(sm_hdr_value_at_percentile(&h, 100), 1000);
	assert_false(sm_hdr_record(&h, -1));
	assert_false(sm_hdr_record_n(&h, 5, -1));
	assert_false(sm_hdr_record_n(&h, INT64_MIN, 1));
	assert_int_equal(h.total_count, 6);
	assert_int_equal(sm_hdr_count_at(&h, -1), 0);
	assert_int_equal(sm_hdr_count_at(&h, INT64_MAX), 0);
	sm_hdr_reset(&h);
	assert_int_equal(h.overflow, 0);
	assert_int_equal(sm_hdr_count_at(&h, 1000), 0);
	sm_hdr_fini(&h);
}

static void
test_add(void **state)
{
	const int64_t highest = INT64_C(60) * 1000 * 1000 * 1000; /* 60 s in ns */
	struct sm_hdr all, a, b, merged, wide, coarse, coarse_direct, small;
	int64_t v, above = 0;
	uint64_t seed = 42;
	int i;

	(void)state;
	assert_int_equal(sm_hdr_init(&all, 1, highest, 3), 0);
	assert_int_equal(sm_hdr_init(&a, 1, highest, 3), 0);
	assert_int_equal(sm_hdr_init(&b, 1, highest, 3), 0);
	assert_int_equal(sm_hdr_init(&merged, 1, highest, 3), 0);
	assert_int_equal(sm_hdr_init(&wide, 1, 1000 * highest, 3), 0);
	assert_int_equal(sm_hdr_init(&coarse, 1000, highest, 2), 0);
	assert_int_equal(sm_hdr_init(&coarse_direct, 1000, highest, 2), 0);
	assert_int_equal(sm_hdr_init(&small, 1, (INT64_C(1) << 20) - 1, 3), 0);
	for (i = 0; i < 20000; i++) {
		/* mostly 0..2 ms, sometimes up to 4 s, a few zeros */
		v = (int64_t)(lcg(&seed) % (i % 97 == 0 ? 4000000000u : 2000000u));
		if (i % 1000 == 0)
			v = 0;
		sm_hdr_record(&all, v);
		sm_hdr_record(i % 2 ? &a : &b, v);
		sm_hdr_record(&coarse_direct, v);
		above += v >= INT64_C(1) << 20;
	}
	/* same layout: one histogram of all the values, exactly, whichever the order */
	assert_int_equal(sm_hdr_add(&merged, &a), 0);
	assert_int_equal(sm_hdr_add(&merged, &b), 0);
	assert_same_counts(&merged, &all);
	assert_int_equal(merged.min, all.min);
	assert_int_equal(merged.max, all.max);
	assert_int_equal(sm_hdr_add(&b, &a), 0);
	assert_int_equal(b.min, all.min);
	assert_int_equal(b.max, all.max);
	assert_int_equal(sm_hdr_add(&a, &merged), 0); /* a + a + b */
	assert_int_equal(a.total_count, all.total_count + merged.total_count / 2);
	sm_hdr_reset(&a);
	assert_int_equal(sm_hdr_add(&a, &b), 0);
	assert_same_counts(&a, &all);
	assert_int_equal(sm_hdr_value_at_percentile(&a, 99.9),
			 sm_hdr_value_at_percentile(&all, 99.9));
	/* same layout, wider range: same buckets, longer array */
	assert_int_equal(sm_hdr_add(&wide, &all), 0);
	assert_int_equal(wide.total_count, all.total_count);
	assert_int_equal(sm_hdr_max(&wide), sm_hdr_max(&all));
	assert_int_equal(sm_hdr_min(&wide), sm_hdr_min(&all));
	for (double p = 0; p <= 100; p += 0.5)
		assert_int_equal(sm_hdr_value_at_percentile(&wide, p),
				 sm_hdr_value_at_percentile(&all, p));
	/* different layout: re-recorded; 3-digit buckets nest in 2-digit ones */
	assert_int_equal(sm_hdr_add(&coarse, &all), 0);
	assert_memory_equal(coarse.counts, coarse_direct.counts,
			    (size_t)coarse.counts_len * sizeof(int64_t));
	assert_int_equal(coarse.total_count, coarse_direct.total_count);
	/* narrower range: what lies above is clamped, counted and returned */
	assert_true(above > 0);
	assert_int_equal(sm_hdr_add(&small, &all), above);
	assert_int_equal(small.overflow, above);
	assert_int_equal(small.total_count, all.total_count);
	assert_int_equal(sm_hdr_count_at(&small, small.highest),
			 sm_hdr_count_at(&all, small.highest) + above);
	/* overflow already counted in the source carries over */
	assert_int_equal(sm_hdr_add(&wide, &small), 0);
	assert_int_equal(wide.overflow, above);
	sm_hdr_fini(&all);
	sm_hdr_fini(&a);
	sm_hdr_fini(&b);
	sm_hdr_fini(&merged);
	sm_hdr_fini(&wide);
	sm_hdr_fini(&coarse);
	sm_hdr_fini(&coarse_direct);
	sm_hdr_fini(&small);
}

static void
roundtrip(const struct sm_hdr *h)
{
	struct sm_hdr back;
	size_t len;
	char *b64;

	assert_int_equal(sm_hdr_encode_base64(h, &b64, &len), 0);
	assert_int_equal(strlen(b64), len);
	assert_int_equal(strncmp(b64, "HISTFAAA", 8), 0); /* V2 compressed cookie */
	assert_int_equal(sm_hdr_decode_base64(b64, len, &back), 0);
	assert_int_equal(back.lowest, h->lowest);
	assert_int_equal(back.highest, h->highest);
	assert_int_equal(back.sig_figs, h->sig_figs);
	assert_same_counts(&back, h);
	assert_true(sm_hdr_mean(&back) == sm_hdr_mean(h));
	sm_hdr_fini(&back);
	/* without the '=' padding (as hdrhistogram-go writes) it decodes the same */
	while (len > 0 && b64[len - 1] == '=')
		len--;
	assert_int_equal(sm_hdr_decode_base64(b64, len, &back), 0);
	assert_same_counts(&back, h);
	sm_hdr_fini(&back);
	sm_free(b64);
}

static void
test_encode_roundtrip(void **state)
{
	struct sm_hdr h;
	uint64_t seed = 7;
	int i;

	(void)state;
	assert_int_equal(sm_hdr_init(&h, 1, HOUR_US * 1000, 3), 0);
	roundtrip(&h); /* empty */
	for (i = 0; i < 10000; i++)
		sm_hdr_record(&h, (int64_t)(lcg(&seed) % (i % 10 ? 5000000u : 3000000000000u)));
	sm_hdr_record(&h, 0);
	/* counts that need every LEB128 length, up to the 9-byte form */
	sm_hdr_record_n(&h, 77, INT64_C(1) << 40);
	sm_hdr_record_n(&h, 78, INT64_C(1) << 61);
	roundtrip(&h);
	sm_hdr_fini(&h);

	load_raw(&h);
	roundtrip(&h);
	sm_hdr_fini(&h);

	/* a value at the very top of the range */
	assert_int_equal(sm_hdr_init(&h, 1000, 2000, 1), 0);
	sm_hdr_record(&h, 2000);
	roundtrip(&h);
	sm_hdr_fini(&h);
}

static int
decode_str(const char *b64, struct sm_hdr *h)
{
	return sm_hdr_decode_base64(b64, strlen(b64), h);
}

static void
reencodes_to(const struct sm_hdr *h, const char *expected)
{
	size_t len;
	char *b64;

	assert_int_equal(sm_hdr_encode_base64(h, &b64, &len), 0);
	assert_string_equal(b64, expected);
	sm_free(b64);
}

static void
test_decode_reference_vectors(void **state)
{
	/* Java-encoded (best compression), one value 42 in a 1..2 auto-resized histogram */
	static const char java42[] = "HISTFAAAAB542pNpmSzMwMDAxAABzFCaEUoz2X+AMIKZAEARAtM=";
	struct sm_hdr h;

	(void)state;
	/*
	 * hdrhistogram-go hdr_encoding_test.go TestHistogram_Load and
	 * HdrHistogramJS encoding.spec "should decode and decompress reading a
	 * base64 string": total count 1, mean 42.
	 */
	assert_int_equal(decode_str(java42, &h), 0);
	assert_int_equal(h.total_count, 1);
	assert_true(sm_hdr_mean(&h) == 42.0);
	assert_int_equal(h.lowest, 1);
	assert_int_equal(h.highest, 2);
	assert_int_equal(h.sig_figs, 3);
	assert_int_equal(sm_hdr_count_at(&h, 42), 1);
	assert_int_equal(sm_hdr_min(&h), 42);
	assert_int_equal(sm_hdr_max(&h), 42);
	assert_int_equal(sm_hdr_value_at_percentile(&h, 50), 42);
	/* and our encoder writes the very same bytes as the Java one */
	reencodes_to(&h, java42);
	sm_hdr_fini(&h);

	/* same histogram as written by HdrHistogramJS (stray offset/ratio bits, no padding) */
	assert_int_equal(decode_str("HISTFAAAAB94nJNpmSzMwMDABMSMQMzMAAGMUJoJxg9mAgA1TQGm", &h), 0);
	assert_int_equal(h.total_count, 1);
	assert_true(sm_hdr_mean(&h) == 42.0);
	sm_hdr_fini(&h);

	/* hdrhistogram-go TestHistogram_Load: empty, 20..1000, 3 digits, no payload at all */
	assert_int_equal(decode_str("HISTFAAAABl4nJNpmSzMgADMUFoEyn1h/wHCAgBDogN4", &h), 0);
	assert_int_equal(h.total_count, 0);
	assert_int_equal(h.lowest, 20);
	assert_int_equal(h.highest, 1000);
	assert_int_equal(h.sig_figs, 3);
	sm_hdr_fini(&h);

	/*
	 * jHiccup interval 0: hdrhistogram-go log_writer_test.go golden values
	 * (total 741, max 2768895, p50 344063, p99 409599) and HdrHistogramJS
	 * HistogramLogReader.spec (floor(mean) 301998).
	 */
	assert_int_equal(decode_str(JHICCUP_INTERVAL0, &h), 0);
	assert_int_equal(h.lowest, 20000);
	assert_int_equal(h.highest, INT64_C(3600000000000));
	assert_int_equal(h.sig_figs, 2);
	assert_int_equal(h.total_count, 741);
	assert_int_equal(sm_hdr_max(&h), 2768895);
	assert_int_equal(sm_hdr_value_at_percentile(&h, 50), 344063);
	assert_int_equal(sm_hdr_value_at_percentile(&h, 99), 409599);
	assert_int_equal((int64_t)floor(sm_hdr_mean(&h)), 301998);
	reencodes_to(&h, JHICCUP_INTERVAL0);
	sm_hdr_fini(&h);

	/*
	 * Every interval jHiccup wrote re-encodes to the same text: lone zero
	 * counts, zero runs and multi-byte counts all laid out as the Java
	 * writer does.
	 */
	for (const char *p = strstr(jhiccup_log, "\n0.127,"); p != NULL; p = strchr(p + 1, '\n')) {
		const char *b64 = strstr(p, ",HIST") + 1, *end = strchr(b64, '\n');
		char *one = strndup(b64, (size_t)(end - b64));

		assert_non_null(one);
		assert_int_equal(decode_str(one, &h), 0);
		reencodes_to(&h, one);
		sm_hdr_fini(&h);
		free(one);
		if (end[1] == '\0')
			break;
	}

	/* a V1 encoding is refused (hdrhistogram-go TestHistogram_Load_Errors) */
	assert_int_equal(decode_str(V1_ENCODED, &h), -ENOTSUP);
	assert_null(h.counts);
	/* HdrHistogram_c test_decode_rejects_crafted_bounds_attacks: V2, negative payload length */
	assert_int_equal(decode_str("HISTBAAAABl4nJNpmcz8HwgYIIARjWay/8CAAgD0TwZm", &h), -EINVAL);
	assert_null(h.counts);
	/* truncated, not base64, too short */
	assert_int_equal(
		sm_hdr_decode_base64(JHICCUP_INTERVAL0, strlen(JHICCUP_INTERVAL0) - 12, &h),
		-EINVAL);
	assert_int_equal(decode_str("HISTFAAA*AAB", &h), -EINVAL);
	assert_int_equal(decode_str("HIST", &h), -EINVAL);
	assert_int_equal(decode_str("", &h), -EINVAL);
	assert_null(h.counts);
}

static void
put_be(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/*
 * A compressed V2 histogram of 1..1000 at 3 digits (2048 counts) around
 * @payload, with @cookie and a declared payload length of @plen, in base64.
 */
static char *
craft(uint32_t cookie, int32_t sig_figs, const uint8_t *payload, size_t n, int32_t plen)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint8_t raw[256] = { 0 }, bin[512];
	uLongf zlen = sizeof(bin) - 8;
	size_t len, i, o = 0;
	char *b64;

	put_be(raw, cookie, 4);
	put_be(raw + 4, (uint32_t)plen, 4);
	put_be(raw + 12, (uint32_t)sig_figs, 4);
	put_be(raw + 16, 1, 8);
	put_be(raw + 24, 1000, 8);
	put_be(raw + 32, 0x3ff0000000000000ull, 8);
	memcpy(raw + 40, payload, n);
	assert_int_equal(compress(bin + 8, &zlen, raw, 40 + n), Z_OK);
	put_be(bin, 0x1c849314, 4);
	put_be(bin + 4, zlen, 4);
	len = 8 + zlen;
	b64 = calloc(1, 4 * (len / 3 + 1) + 1);
	assert_non_null(b64);
	for (i = 0; i < len; i += 3) { /* unpadded, which the decoder accepts */
		uint32_t w = (uint32_t)bin[i] << 16 |
			     (i + 1 < len ? (uint32_t)bin[i + 1] << 8 : 0) |
			     (i + 2 < len ? bin[i + 2] : 0);

		for (int k = 0; k < (i + 2 < len ? 4 : i + 1 < len ? 3 : 2); k++)
			b64[o++] = abc[(w >> (18 - 6 * k)) & 63];
	}
	return b64;
}

static int
decode_crafted(uint32_t cookie, int32_t sig_figs, const uint8_t *payload, size_t n, int32_t plen,
	       struct sm_hdr *h)
{
	char *b64 = craft(cookie, sig_figs, payload, n, plen);
	int rc = decode_str(b64, h);

	free(b64);
	return rc;
}

static void
test_decode_crafted(void **state)
{
	/* zig-zag: 0x05 = -3 (three empty counts), 0x0a = 5, 0x02 = 1 */
	static const uint8_t ok[] = { 0x05, 0x0a, 0x02 };
	/* zero runs: -2047 then -2 (one past the 2048 counts) */
	static const uint8_t run_past[] = { 0xfd, 0x1f, 0x03 };
	/* -2047, then two counts: the second lands past the end */
	static const uint8_t count_past[] = { 0xfd, 0x1f, 0x02, 0x02 };
	/* a count whose last byte still says "more follows" */
	static const uint8_t cut[] = { 0x05, 0x8a };
	struct sm_hdr h;

	(void)state;
	assert_int_equal(decode_crafted(0x1c849313, 3, ok, 3, 3, &h), 0);
	assert_int_equal(h.counts_len, 2048);
	assert_int_equal(sm_hdr_count_at(&h, 3), 5);
	assert_int_equal(sm_hdr_count_at(&h, 4), 1);
	assert_int_equal(h.total_count, 6);
	assert_int_equal(sm_hdr_min(&h), 3);
	assert_int_equal(sm_hdr_max(&h), 4);
	sm_hdr_fini(&h);
	/* without the word-size nibble, as HdrHistogram_c's crafted vectors */
	assert_int_equal(decode_crafted(0x1c849303, 3, ok, 3, 3, &h), 0);
	sm_hdr_fini(&h);

	assert_int_equal(decode_crafted(0x1c849313, 3, run_past, 3, 3, &h), -EINVAL);
	assert_int_equal(decode_crafted(0x1c849313, 3, count_past, 4, 4, &h), -EINVAL);
	assert_int_equal(decode_crafted(0x1c849313, 3, cut, 2, 2, &h), -EINVAL);
	assert_int_equal(decode_crafted(0x1c849313, 3, ok, 3, 2, &h),
			 -EINVAL); /* longer than said */
	assert_int_equal(decode_crafted(0x1c849313, 3, ok, 3, 4, &h), -EINVAL); /* shorter */
	assert_int_equal(decode_crafted(0x1c849313, 3, ok, 3, -1, &h), -EINVAL);
	assert_int_equal(decode_crafted(0x1c849313, 9, ok, 3, 3, &h), -EINVAL); /* 9 digits */
	assert_int_equal(decode_crafted(0x1c849301, 3, ok, 3, 3, &h), -EINVAL); /* V1 inside V2 */
	assert_null(h.counts);
}

/* ---- interval log ---- */

struct expect {
	const char *tag;
	double start, length;
	const struct sm_hdr *h;
};

struct read_ctx {
	const struct expect *expect;
	int n;
};

static int
check_interval(const char *tag, double start_s, double length_s, const struct sm_hdr *h, void *arg)
{
	struct read_ctx *c = arg;
	const struct expect *e = &c->expect[c->n++];

	if (e->tag == NULL)
		assert_null(tag);
	else
		assert_string_equal(tag, e->tag);
	assert_true(fabs(start_s - e->start) < 1e-6);
	assert_true(fabs(length_s - e->length) < 1e-6);
	assert_same_counts(h, e->h);
	return 0;
}

static void
test_log_roundtrip(void **state)
{
	const double t0 = 1700000000.5;
	struct sm_hdr rt, st, plain;
	/* relative stamps are more than a year before StartTime: read back added to it */
	const struct expect want[] = {
		{ "WRITE-rt", t0, 1.0, &rt },
		{ "WRITE-st", t0, 1.0, &st },
		{ NULL, t0 + 1.0, 0.25, &plain },
		{ NULL, t0 + 1.25, 0.75, &rt },
	};
	struct read_ctx ctx = { want, 0 };
	char err[128], line[64];
	size_t size;
	char *text;
	FILE *f;

	(void)state;
	assert_int_equal(sm_hdr_init(&rt, 1, HOUR_US * 1000, 3), 0);
	assert_int_equal(sm_hdr_init(&st, 1, HOUR_US * 1000, 3), 0);
	assert_int_equal(sm_hdr_init(&plain, 1, HOUR_US * 1000, 3), 0);
	for (int i = 1; i <= 1000; i++) {
		sm_hdr_record(&rt, i * 1000);	       /* 1 us .. 1 ms */
		sm_hdr_record(&st, i * 1000 + 250000); /* queued a quarter ms */
	}
	sm_hdr_record(&rt, 2500000000); /* 2.5 s */

	f = open_memstream(&text, &size);
	assert_non_null(f);
	assert_int_equal(
		sm_hdr_log_write_header(f, "Logging op latencies for Cassandra Stress", t0), 0);
	assert_int_equal(sm_hdr_log_write(f, "WRITE-rt", 0.0, 1.0, &rt), 0);
	assert_int_equal(sm_hdr_log_write(f, "WRITE-st", 0.0, 1.0, &st), 0);
	assert_int_equal(sm_hdr_log_write(f, NULL, 1.0, 0.25, &plain), 0);
	assert_int_equal(sm_hdr_log_write(f, "", 1.25, 0.75, &rt), 0);
	/* a tag that would split the line is refused, and nothing is written */
	assert_int_equal(sm_hdr_log_write(f, "WRITE rt", 2.0, 1.0, &rt), -EINVAL);
	assert_int_equal(sm_hdr_log_write(f, "a,b", 2.0, 1.0, &rt), -EINVAL);
	assert_int_equal(fclose(f), 0);

	/* HistogramLogWriter's lines; Interval_Max in ms of the max's highest equivalent */
	assert_non_null(strstr(text,
			       "#Logging op latencies for Cassandra Stress\n"
			       "#[Histogram log format version 1.3]\n"
			       "#[StartTime: 1700000000.500 (seconds since epoch), Tue Nov 14 "));
	assert_non_null(strstr(text,
			       "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
			       "\"Interval_Compressed_Histogram\"\nTag=WRITE-rt,0.000,1.000,"));
	snprintf(line, sizeof(line), "Tag=WRITE-rt,0.000,1.000,%.3f,HISTFAAA",
		 (double)sm_hdr_max(&rt) / 1e6);
	assert_non_null(strstr(text, line));
	assert_int_equal(sm_hdr_max(&rt) / 1000000, 2501);
	assert_non_null(strstr(text, "\n1.000,0.250,0.000,HISTFAAA"));
	assert_non_null(strstr(text, "\n1.250,0.750,"));
	assert_null(strstr(text, "2.000,"));

	f = fmemopen(text, size, "r");
	assert_non_null(f);
	assert_int_equal(sm_hdr_log_read(f, check_interval, &ctx, err, sizeof(err)), 0);
	assert_int_equal(ctx.n, 4);
	assert_string_equal(err, "");
	fclose(f);
	free(text); /* open_memstream() allocates with malloc */
	sm_hdr_fini(&rt);
	sm_hdr_fini(&st);
	sm_hdr_fini(&plain);
}

/* A stream over a copy of @text (fmemopen() wants it writable); free *@copy after fclose(). */
static FILE *
open_text(const char *text, char **copy)
{
	FILE *f;

	*copy = strdup(text);
	assert_non_null(*copy);
	f = fmemopen(*copy, strlen(text), "r");
	assert_non_null(f);
	return f;
}

struct jhiccup_ctx {
	struct sm_hdr acc;
	int n;
	int64_t total;
	double first_start, first_length;
};

static int
accumulate(const char *tag, double start_s, double length_s, const struct sm_hdr *h, void *arg)
{
	struct jhiccup_ctx *c = arg;

	assert_null(tag);
	if (c->n == 0) {
		c->first_start = start_s;
		c->first_length = length_s;
		/* hdrhistogram-go golden interval 0; HdrHistogramJS floor(mean) */
		assert_int_equal(h->total_count, 741);
		assert_int_equal(sm_hdr_max(h), 2768895);
		assert_int_equal(sm_hdr_value_at_percentile(h, 50), 344063);
		assert_int_equal(sm_hdr_value_at_percentile(h, 99), 409599);
		assert_int_equal((int64_t)floor(sm_hdr_mean(h)), 301998);
	} else if (c->n == 1) {
		/* HdrHistogramJS "should return next histogram in the logs" */
		assert_int_equal((int64_t)floor(sm_hdr_mean(h)), 293719);
	}
	c->n++;
	c->total += h->total_count;
	assert_int_equal(sm_hdr_add(&c->acc, h), 0);
	return 0;
}

static void
read_jhiccup(const char *text, struct jhiccup_ctx *c)
{
	char err[128], *copy;
	FILE *f;

	memset(c, 0, sizeof(*c));
	/* accumulator as HdrHistogram_c decode_v2_log: 1..3600e9 at 3 digits */
	assert_int_equal(sm_hdr_init(&c->acc, 1, INT64_C(3600000000000), 3), 0);
	f = open_text(text, &copy);
	assert_int_equal(sm_hdr_log_read(f, accumulate, c, err, sizeof(err)), 0);
	fclose(f);
	free(copy);
	/*
	 * HdrHistogram_c decode_v2_log, HdrHistogram Java jHiccupV2Log and
	 * HdrHistogramJS "the whole 9 yards": 62 intervals, 48761 values,
	 * p99.9 1745879039 (C also: max 1796210687).
	 */
	assert_int_equal(c->n, 62);
	assert_int_equal(c->total, 48761);
	assert_int_equal(c->acc.total_count, 48761);
	assert_int_equal(sm_hdr_value_at_percentile(&c->acc, 99.9), 1745879039);
	assert_int_equal(sm_hdr_max(&c->acc), 1796210687);
	assert_true(fabs(c->first_length - 1.007) < 1e-9);
	sm_hdr_fini(&c->acc);
}

static void
test_log_read_reference(void **state)
{
	struct jhiccup_ctx c;
	char *no_base, *p;

	(void)state;
	/* HdrHistogramJS "should use basetime to set timestamps": 1441812123.250 */
	read_jhiccup(jhiccup_log, &c);
	assert_true(fabs(c.first_start - 1441812123.250) < 1e-6);

	/*
	 * The same log without its BaseTime line, as jHiccup wrote it: stamps
	 * are relative to StartTime (hdrhistogram-go golden StartTimeMs
	 * 1441812279601).
	 */
	no_base = strdup(jhiccup_log);
	assert_non_null(no_base);
	p = strstr(no_base, "#[BaseTime:");
	assert_non_null(p);
	memmove(p, strchr(p, '\n') + 1, strlen(strchr(p, '\n') + 1) + 1);
	read_jhiccup(no_base, &c);
	assert_true(fabs(c.first_start - 1441812279.601) < 1e-6);
	free(no_base);
}

struct tags_ctx {
	char tags[4][32];
	double start[4];
	int64_t total[4];
	int n;
};

static int
collect(const char *tag, double start_s, double length_s, const struct sm_hdr *h, void *arg)
{
	struct tags_ctx *c = arg;

	(void)length_s;
	snprintf(c->tags[c->n], sizeof(c->tags[0]), "%s", tag != NULL ? tag : "(none)");
	c->start[c->n] = start_s;
	c->total[c->n] = h->total_count;
	c->n++;
	return c->n == 3 ? 7 : 0; /* a non-zero return stops the read */
}

static int
read_text(const char *text, void *ctx, sm_hdr_log_fn fn, char *err, size_t errlen)
{
	char *copy;
	FILE *f = open_text(text, &copy);
	int rc;

	rc = sm_hdr_log_read(f, fn, ctx, err, errlen);
	fclose(f);
	free(copy);
	return rc;
}

static void
test_log_read_tags(void **state)
{
	/* HdrHistogramJS HistogramLogReader.spec: tags of a tagged log */
	static const char tagged[] =
		"#[Fake log chunk]\n"
		"#[Histogram log format version 1.2]\n"
		"#[StartTime: 1441812279.474 (seconds since epoch), Wed Sep 09 08:24:39 PDT 2015]\n"
		"\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_"
		"Histogram\"\n"
		"Tag=NOT-EMPTY,0.127,1.007,2.769," JHICCUP_INTERVAL0 "\n"
		"Tag=A,0.127,1.007,2.769," JHICCUP_INTERVAL0 "\r\n"
		"\n"
		"0.127,1.007,2.769," JHICCUP_INTERVAL0 "\n"
		"1.127,1.007,2.769," JHICCUP_INTERVAL0 "\n";
	/* HdrHistogramJS test_files/bug-whitespace.hlog: trailing blank, no header, absolute */
	static const char whitespace[] = "Tag=bo-global-http,1527510686.313,40.807,0.000,"
					 "HISTFAAAABx4nJNpmSzMwMDACMXMDBDAyCD/HwzgfAB/wwdn \n";
	struct tags_ctx c = { 0 };
	char err[128];

	(void)state;
	assert_int_equal(read_text(tagged, &c, collect, err, sizeof(err)), 7);
	assert_int_equal(c.n, 3);
	assert_string_equal(c.tags[0], "NOT-EMPTY");
	assert_string_equal(c.tags[1], "A");
	assert_string_equal(c.tags[2], "(none)");
	assert_int_equal(c.total[1], 741);
	assert_true(fabs(c.start[2] - 1441812279.601) < 1e-6);

	memset(&c, 0, sizeof(c));
	assert_int_equal(read_text(whitespace, &c, collect, err, sizeof(err)), 0);
	assert_int_equal(c.n, 1);
	assert_string_equal(c.tags[0], "bo-global-http");
	assert_true(fabs(c.start[0] - 1527510686.313) < 1e-6);
	assert_int_equal(c.total[0], 0);
}

static int
never(const char *tag, double start_s, double length_s, const struct sm_hdr *h, void *arg)
{
	(void)tag;
	(void)start_s;
	(void)length_s;
	(void)h;
	(*(int *)arg)++;
	return 0;
}

static void
test_log_read_malformed(void **state)
{
	static const struct {
		const char *text;
		int rc;
		const char *err; /* prefix */
	} cases[] = {
		{ "#[Histogram log format version 1.3]\n0.000,1.000\n", -EINVAL,
		  "line 2: expected" },
		{ "\"StartTimestamp\"\n1.0,x,0.5," JHICCUP_INTERVAL0 "\n", -EINVAL,
		  "line 2: start" },
		{ "0.0 ,1.0,0.5," JHICCUP_INTERVAL0 "\n", -EINVAL, "line 1: start" },
		{ "1e999,1.0,0.5," JHICCUP_INTERVAL0 "\n", -EINVAL, "line 1: start" },
		{ "0.0,-1.0,0.5," JHICCUP_INTERVAL0 "\n", -EINVAL, "line 1: start" },
		{ "Tag=A\n", -EINVAL, "line 1: a tag but no interval" },
		{ "Tag=A,0.0,1.0\n", -EINVAL, "line 1: expected" },
		{ "0.0,1.0,0.0,HIST!!!!\n", -EINVAL, "line 1: malformed compressed histogram" },
		{ "0.0,1.0,0.0,\n", -EINVAL, "line 1: malformed" },
		{ "0.0,1.0,0.0," JHICCUP_INTERVAL0 ",extra\n", -EINVAL, "line 1: malformed" },
		{ "#[StartTime: nan (seconds since epoch)]\n", -EINVAL, "line 1: StartTime" },
		{ "#c\n#c\n0.0,1.0,0.0," V1_ENCODED "\n", -ENOTSUP, "line 3: V0/V1" },
	};
	char err[128];
	int calls;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		calls = 0;
		assert_int_equal(read_text(cases[i].text, &calls, never, err, sizeof(err)),
				 cases[i].rc);
		if (strncmp(err, cases[i].err, strlen(cases[i].err)) != 0)
			fail_msg("case %zu: error \"%s\", expected \"%s...\"", i, err,
				 cases[i].err);
		assert_int_equal(calls, 0);
	}
	/* the intervals before the bad line were delivered; errlen 0 is allowed */
	calls = 0;
	assert_int_equal(
		read_text("0.0,1.0,0.0," JHICCUP_INTERVAL0 "\nbad\n", &calls, never, NULL, 0),
		-EINVAL);
	assert_int_equal(calls, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_reference_percentiles),
		cmocka_unit_test(test_large_values_and_rounding),
		cmocka_unit_test(test_equivalence_clamp_reject),
		cmocka_unit_test(test_add),
		cmocka_unit_test(test_encode_roundtrip),
		cmocka_unit_test(test_decode_reference_vectors),
		cmocka_unit_test(test_decode_crafted),
		cmocka_unit_test(test_log_roundtrip),
		cmocka_unit_test(test_log_read_reference),
		cmocka_unit_test(test_log_read_tags),
		cmocka_unit_test(test_log_read_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
