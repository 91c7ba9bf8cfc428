/** What a kubeconfig resolves to: shared by the reader (kubeconfig.ts) and the credential sources. */
export type AuthKind = 'client-certificate' | 'token' | 'token-file' | 'basic' | 'exec' | 'auth-provider';

/** What the kubeconfig says about where requests go and as whom; nothing secret, safe to log. */
export interface KubeconfigInfo {
  /** The kubeconfig file(s) read, or `in-cluster <dir>`. */
  source: string;
  context: string;
  cluster: string;
  /** The kubeconfig user, unset for a context without one (anonymous). */
  user: string | undefined;
  /** The API server's URL, without a trailing slash. */
  server: string;
  /** The context's namespace (in-cluster: the service account's), if it names one. */
  namespace: string | undefined;
  /** The CA bundle that verifies the API server, from a file or from data. */
  ca: Buffer | undefined;
  insecureSkipTlsVerify: boolean;
  tlsServerName: string | undefined;
  /** How requests authenticate, empty for anonymous. */
  auth: AuthKind[];
  /** User impersonated on every request (`as:`), if any. */
  impersonate: string | undefined;
}

/** TLS options for undici's connector (and node:tls). */
export interface KubeTls {
  ca?: Buffer;
  cert?: Buffer | string;
  key?: Buffer | string;
  rejectUnauthorized?: boolean;
  servername?: string;
}

export type KubeHeaders = Record<string, string | string[]>;

export interface Kubeconfig {
  info: KubeconfigInfo;
  tls: KubeTls;
  /** Authorization and Impersonate-* headers; token files are read again, exec plugins re-run when expired. */
  headers(): Promise<KubeHeaders>;
}
