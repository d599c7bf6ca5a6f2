// The model families a file of the user's own may belong to (`--model-family`). Pure, so config
// parsing can use it; model/families.ts holds each family's conventions.

export const MODEL_FAMILIES = ['isnet', 'u2net', 'birefnet', 'rmbg', 'custom'] as const;
export type ModelFamily = (typeof MODEL_FAMILIES)[number];

export function parseModelFamily(text: string): ModelFamily | undefined {
  return (MODEL_FAMILIES as readonly string[]).includes(text) ? (text as ModelFamily) : undefined;
}
