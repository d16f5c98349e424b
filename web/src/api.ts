// The API clients: Connect over fetch, to the origin that served the page.
// The tenant API key lives in sessionStorage only (never a URL or a log).
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { RegistryService } from "./gen/debated/v1/registry_pb";
import { DebateService } from "./gen/debated/v1/debate_pb";
import { KeyService } from "./gen/debated/v1/keys_pb";

const KEY = "debated.apiKey";

export function apiKey(): string | null {
  return sessionStorage.getItem(KEY);
}
export function signIn(key: string): void {
  sessionStorage.setItem(KEY, key);
}
export function signOut(): void {
  sessionStorage.removeItem(KEY);
}

const auth: Interceptor = (next) => async (req) => {
  const k = apiKey();
  if (k) req.header.set("Authorization", "Bearer " + k);
  return next(req);
};

const transport = createConnectTransport({
  baseUrl: location.origin,
  interceptors: [auth],
  useBinaryFormat: true,
});

export const registry: Client<typeof RegistryService> = createClient(RegistryService, transport);
export const debates: Client<typeof DebateService> = createClient(DebateService, transport);
export const keyService: Client<typeof KeyService> = createClient(KeyService, transport);
