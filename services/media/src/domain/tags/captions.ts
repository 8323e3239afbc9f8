/** What a vision model said of a picture. */
export interface Caption {
  caption: string;
  tags: string[];
  model: string;
}

const PROMPT =
  'Describe this photo for a personal archive. Answer with JSON only: {"caption": one sentence, "tags": up to 10 short lowercase words for what it shows}.';

/** The answer's JSON, even when the model wrapped it in prose or a code fence. */
function parseAnswer(content: string): { caption: string; tags: string[] } {
  const json = /\{[\s\S]*\}/.exec(content)?.[0];
  if (json) {
    try {
      const parsed = JSON.parse(json) as { caption?: unknown; tags?: unknown };
      if (typeof parsed.caption === 'string')
        return {
          caption: parsed.caption.trim(),
          tags: Array.isArray(parsed.tags)
            ? parsed.tags
                .filter((t): t is string => typeof t === 'string')
                .map((t) => t.trim().toLowerCase())
                .filter(Boolean)
                .slice(0, 10)
            : [],
        };
    } catch {
      // Not JSON after all: the whole answer is the caption.
    }
  }
  return { caption: content.trim(), tags: [] };
}

/**
 * Captions and richer tags from a vision model behind an OpenAI-compatible
 * `/v1/chat/completions` (OpenAI, vLLM, llama.cpp's server, Ollama's /v1): MEMEX_VISION_URL (the
 * base URL) and MEMEX_VISION_MODEL (default `llava`), MEMEX_VISION_KEY if it wants a bearer token.
 * Null when none is configured: nothing leaves the machine unless the user points it somewhere.
 */
export class VisionCaptioner {
  private constructor(
    private readonly url: string,
    readonly model: string,
    private readonly key: string | undefined,
  ) {}

  static fromEnv(env: NodeJS.ProcessEnv = process.env): VisionCaptioner | null {
    const url = env['MEMEX_VISION_URL'];
    if (!url) return null;
    return new VisionCaptioner(url.replace(/\/+$/, ''), env['MEMEX_VISION_MODEL'] || 'llava', env['MEMEX_VISION_KEY']);
  }

  /** The caption of a picture (WebP or JPEG bytes); throws with the endpoint's answer when it fails. */
  async caption(image: Buffer, contentType: string): Promise<Caption> {
    const response = await fetch(`${this.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(this.key ? { authorization: `Bearer ${this.key}` } : {}) },
      body: JSON.stringify({
        model: this.model,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: PROMPT },
              { type: 'image_url', image_url: { url: `data:${contentType};base64,${image.toString('base64')}` } },
            ],
          },
        ],
        temperature: 0,
      }),
      signal: AbortSignal.timeout(120_000),
    });
    if (!response.ok)
      throw new Error(
        `the vision endpoint ${this.url} answered ${response.status}: ${(await response.text()).slice(0, 200)}`,
      );
    const body = (await response.json()) as { choices?: Array<{ message?: { content?: unknown } }> };
    const content = body.choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw new Error(`the vision endpoint ${this.url} sent no message content`);
    return { ...parseAnswer(content), model: this.model };
  }
}
