// The test servers whose responses must match the OpenAPI document: startTestServer adds its origin,
// and http-client.ts checks every response from one (openapi-check.ts, loaded only then).

export const documentedOrigins = new Set<string>();
