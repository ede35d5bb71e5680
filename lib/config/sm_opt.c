/* SPDX-License-Identifier: BSD-3-Clause */
/* Option tables' typed stores (sm_opt.h). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sm_opt.h"

static int
u64_value(const char *name, const char *v, uint64_t min, uint64_t max, uint64_t *out, char *err,
	  size_t errlen)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = v != NULL ? strtoull(v, &end, 10) : 0;
	if (v == NULL || errno || end == v || *end != '\0' || v[0] == '-' || x < min || x > max) {
		snprintf(err, errlen, "%s: expected an integer from %llu to %llu, got '%s'", name,
			 (unsigned long long)min, (unsigned long long)max, v != NULL ? v : "");
		return -EINVAL;
	}
	*out = x;
	return 0;
}

static int
bool_value(const char *name, const char *v, bool *out, char *err, size_t errlen)
{
	if (v == NULL || strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 ||
	    strcasecmp(v, "yes") == 0 || strcasecmp(v, "on") == 0) {
		*out = true;
		return 0;
	}
	if (strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0 || strcasecmp(v, "no") == 0 ||
	    strcasecmp(v, "off") == 0) {
		*out = false;
		return 0;
	}
	snprintf(err, errlen, "%s: expected true or false (1 or 0), got '%s'", name, v);
	return -EINVAL;
}

int
sm_opt_store(const char *name, enum sm_opt_type type, uint64_t min, uint64_t max,
	     const char *value, void *field, char *err, size_t errlen)
{
	uint64_t x;
	int ret;

	switch (type) {
	case SM_OPT_BOOL:
		return bool_value(name, value, field, err, errlen);
	case SM_OPT_UINT:
		if (max > UINT32_MAX)
			max = UINT32_MAX;
		ret = u64_value(name, value, min, max, &x, err, errlen);
		if (ret == 0)
			*(unsigned *)field = (unsigned)x;
		return ret;
	case SM_OPT_U64:
		return u64_value(name, value, min, max, field, err, errlen);
	case SM_OPT_STRING:
		*(const char **)field = value != NULL && value[0] != '\0' ? value : NULL;
		return 0;
	case SM_OPT_OUTPUT:
		*(const char **)field = value;
		return 0;
	case SM_OPT_IGNORED:
		return 0;
	case SM_OPT_FN:
		break;
	}
	snprintf(err, errlen, "%s: the option has no typed store (a setter row)", name);
	return -EINVAL;
}
