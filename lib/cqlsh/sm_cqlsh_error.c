/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A failed statement's line, as cqlsh prints it: perform_simple_statement()
 * writes the exception's class name, ": ", then its message. The Python
 * driver (cassandra/protocol.py) turns some error codes into exceptions
 * whose text is the summary 'Error from server: code=%04x [%s]
 * message="%s"', with " info={...}" for the timeouts and failures; the
 * others stay protocol messages whose .message is the server's text alone.
 * The table below is that mapping.
 */

#include <string.h>
#include <strings.h>

#include "sm_core.h"
#include "sm_cqlsh.h"

enum err_form {
	FORM_RAW,	  /* the server's message */
	FORM_SUMMARY,	  /* Error from server: code=... [summary] message="..." */
	FORM_UNAVAILABLE, /* + info={'consistency', 'required_replicas', 'alive_replicas'} */
	FORM_TIMEOUT,	  /* + info={'consistency', 'required_responses', 'received_responses'} */
	FORM_FAILURE,	  /* + 'failures' */
	FORM_EXISTS,	  /* Keyspace 'ks' already exists / Table 'ks.t' already exists */
};

static const struct {
	int32_t code;
	const char *cls, *summary;
	enum err_form form;
} errors[] = {
	{ SM_CQL_ERR_SERVER, "ServerError", "Server error", FORM_RAW },
	{ SM_CQL_ERR_PROTOCOL, "ProtocolException", "Protocol error", FORM_RAW },
	{ SM_CQL_ERR_BAD_CREDENTIALS, "BadCredentials", "Bad credentials", FORM_RAW },
	{ SM_CQL_ERR_UNAVAILABLE, "Unavailable", "Unavailable exception", FORM_UNAVAILABLE },
	{ SM_CQL_ERR_OVERLOADED, "OverloadedErrorMessage", "Coordinator node overloaded",
	  FORM_RAW },
	{ SM_CQL_ERR_IS_BOOTSTRAPPING, "IsBootstrappingErrorMessage",
	  "Coordinator node is bootstrapping", FORM_RAW },
	{ SM_CQL_ERR_TRUNCATE, "TruncateError", "Error during truncate", FORM_RAW },
	{ SM_CQL_ERR_WRITE_TIMEOUT, "WriteTimeout",
	  "Coordinator node timed out waiting for replica nodes' responses", FORM_TIMEOUT },
	{ SM_CQL_ERR_READ_TIMEOUT, "ReadTimeout",
	  "Coordinator node timed out waiting for replica nodes' responses", FORM_TIMEOUT },
	{ SM_CQL_ERR_READ_FAILURE, "ReadFailure", "Replica(s) failed to execute read",
	  FORM_FAILURE },
	{ SM_CQL_ERR_FUNCTION_FAILURE, "FunctionFailure", "User Defined Function failure",
	  FORM_SUMMARY },
	{ SM_CQL_ERR_WRITE_FAILURE, "WriteFailure", "Replica(s) failed to execute write",
	  FORM_FAILURE },
	{ SM_CQL_ERR_CDC_WRITE_FAILURE, "CDCWriteException",
	  "Failed to execute write due to CDC space exhaustion.", FORM_RAW },
	{ SM_CQL_ERR_SYNTAX, "SyntaxException", "Syntax error in CQL query", FORM_RAW },
	{ SM_CQL_ERR_UNAUTHORIZED, "Unauthorized", "Unauthorized", FORM_SUMMARY },
	{ SM_CQL_ERR_INVALID, "InvalidRequest", "Invalid query", FORM_SUMMARY },
	{ SM_CQL_ERR_CONFIG, "ConfigurationException",
	  "Query invalid because of configuration issue", FORM_RAW },
	{ SM_CQL_ERR_ALREADY_EXISTS, "AlreadyExists", "Item already exists", FORM_EXISTS },
	{ SM_CQL_ERR_UNPREPARED, "PreparedQueryNotFound",
	  "Matching prepared statement not found on this node", FORM_RAW },
};

static const char *const cl_names[] = {
	"ANY",	       "ONE",	      "TWO",	"THREE",	"QUORUM",   "ALL",
	"LOCAL_QUORUM", "EACH_QUORUM", "SERIAL", "LOCAL_SERIAL", "LOCAL_ONE",
};

const char *
sm_cqlsh_consistency_name(uint16_t cl)
{
	return cl < SM_ARRAY_SIZE(cl_names) ? cl_names[cl] : "?";
}

int
sm_cqlsh_consistency_parse(const char *name)
{
	size_t i;

	for (i = 0; i < SM_ARRAY_SIZE(cl_names); i++)
		if (strcasecmp(name, cl_names[i]) == 0)
			return (int)i;
	return -1;
}

void
sm_cqlsh_error_text(struct sm_cqlsh_str *out, const struct sm_cqlsh_result *r)
{
	size_t i;

	if (r->kind == SM_CQLSH_FAILED) {
		sm_cqlsh_str_printf(out, "ConnectionException: %s", r->message ? r->message : "");
		return;
	}
	for (i = 0; i < SM_ARRAY_SIZE(errors) && errors[i].code != r->code; i++)
		;
	if (i == SM_ARRAY_SIZE(errors)) {
		/* The driver keeps codes it does not know as its base class. */
		sm_cqlsh_str_printf(out, "ErrorMessage: %s", r->message);
		return;
	}
	sm_cqlsh_str_printf(out, "%s: ", errors[i].cls);
	switch (errors[i].form) {
	case FORM_RAW:
		sm_cqlsh_str_puts(out, r->message);
		return;
	case FORM_EXISTS:
		if (r->err_table != NULL && r->err_table[0] != '\0')
			sm_cqlsh_str_printf(out, "Table '%s.%s' already exists", r->err_keyspace,
					    r->err_table);
		else
			sm_cqlsh_str_printf(out, "Keyspace '%s' already exists", r->err_keyspace);
		return;
	default:
		break;
	}
	sm_cqlsh_str_printf(out, "Error from server: code=%04x [%s] message=\"%s\"",
			    (unsigned)r->code, errors[i].summary, r->message);
	switch (errors[i].form) {
	case FORM_UNAVAILABLE:
		sm_cqlsh_str_printf(out,
				    " info={'consistency': '%s', 'required_replicas': %d, "
				    "'alive_replicas': %d}",
				    sm_cqlsh_consistency_name(r->consistency), r->required,
				    r->alive);
		break;
	case FORM_TIMEOUT:
	case FORM_FAILURE:
		sm_cqlsh_str_printf(out,
				    " info={'consistency': '%s', 'required_responses': %d, "
				    "'received_responses': %d",
				    sm_cqlsh_consistency_name(r->consistency), r->blockfor,
				    r->received);
		if (errors[i].form == FORM_FAILURE)
			sm_cqlsh_str_printf(out, ", 'failures': %d", r->numfailures);
		else if (r->code == SM_CQL_ERR_WRITE_TIMEOUT && r->write_type != NULL)
			sm_cqlsh_str_printf(out, ", 'write_type': '%s'", r->write_type);
		sm_cqlsh_str_puts(out, "}");
		break;
	default:
		break;
	}
}
