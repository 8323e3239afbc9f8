export interface TokensTable {
  id: string;
  name: string;
  labels: string[];
  sha256: string;
  created_at: Date;
  revoked_at: Date | null;
}

export interface GatewayDatabase {
  tokens: TokensTable;
}
