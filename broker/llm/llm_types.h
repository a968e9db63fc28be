/* The types every part of the LLM code shares: the model's settings and the
 * caller's streaming callbacks.  Types only, so that the providers and the
 * stream helpers (below llm.c) need not include llm.h. */
#ifndef BROKER_LLM_TYPES_H
#define BROKER_LLM_TYPES_H

#include <stdbool.h>
#include <stddef.h>

struct llm_config {
	char *provider;        /* "openai", "anthropic", "ollama", "replay" */
	char *model;           /* the provider's model name */
	char *api_base;        /* e.g. "https://api.openai.com/v1"; NULL = provider default */
	char *api_key;         /* never logged, never saved */
	bool tools;            /* false: fenced code blocks in text (--no-tools) */
	long connect_timeout_ms, idle_timeout_ms;
	int max_retries;       /* on 429/5xx, with backoff and Retry-After */
	int max_tokens;        /* 0 = provider default */
	double temperature;    /* < 0 = provider default */
	long replay_delay_ms;  /* replay only: pause between streamed chunks */
	int vision;            /* images to the model: 0 by the model's name
	                        * (lmc_model_vision), 1 yes, -1 no */
};

struct llm_events {
	void (*text)(void *ctx, const char *s, size_t n);   /* assistant text, as it streams */
	void (*code_start)(void *ctx, const char *language); /* a tool call began (may be NULL) */
	void (*retry)(void *ctx, int attempt, long wait_ms, const char *why); /* may be NULL */
};

#endif
