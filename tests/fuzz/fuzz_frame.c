/* libFuzzer target: the supervisor's frame decoder, the first code a
 * compromised broker reaches.  Feeds the input through a connection
 * buffer in arbitrary splits, decodes every frame, and re-encodes what
 * decoded so the encoder is exercised on hostile values too. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "warden/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct werr err = { 0 };
	struct wbuf out;
	size_t off = 0;

	wbuf_init(&out, WPROTO_FRAME_MAX);
	while (off < size) {
		struct wmsg m;
		long n = wproto_frame_len(data + off, size - off, &err);
		if (n <= 0 || (size_t)n > size - off)
			break;
		if (wproto_decode(data + off, (size_t)n, &m, &err) == 0) {
			wbuf_reset(&out);
			switch (m.type) {
			case WM_OPEN:
				(void)wproto_open(&out, m.req, m.profile, m.workspace, m.flags, &err);
				break;
			case WM_RUN:
				(void)wproto_run_approved(&out, m.session, m.block, m.language, m.data,
				                          m.data_len, m.flags, &err);
				break;
			case WM_RESULT:
				(void)wproto_result(&out, &m.res, &err);
				break;
			case WM_DISPLAY:
				(void)wproto_display(&out, m.session, m.block, m.format, m.data,
				                     m.data_len, &err);
				break;
			case WM_WIDEN:
				(void)wproto_widen(&out, m.req, m.session, m.kind, m.value, m.flags, &err);
				break;
			case WM_WIDENED:
				(void)wproto_widened(&out, m.req, m.session, m.kind, m.flags, m.text, &err);
				break;
			case WM_REFUSALS:
				(void)wproto_refusals(&out, m.session, m.block, m.text, &err);
				break;
			case WM_LINE:
				(void)wproto_line(&out, m.session, m.block, m.line, &err);
				break;
			case WM_WELCOME:
				(void)wproto_welcome(&out, m.version, m.profile, m.workspace, m.list,
				                     m.n_list, &err);
				break;
			default:
				break;
			}
			/* what decoded re-encodes to the same bytes */
			if (out.len && (out.len != (size_t)n || memcmp(out.d, data + off, out.len)))
				abort();
			wmsg_free(&m);
		}
		off += (size_t)n;
	}
	wbuf_free(&out);
	return 0;
}
