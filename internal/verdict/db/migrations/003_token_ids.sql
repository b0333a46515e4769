-- The ids (jti) of the OIDC tokens the service has accepted, each kept
-- until its token expires: a token is accepted once, so one captured from
-- a log or a proxy cannot be replayed while it is still valid.
CREATE TABLE token_ids (
	jti TEXT NOT NULL PRIMARY KEY,
	expires_ns BIGINT NOT NULL
);
CREATE INDEX token_ids_expires ON token_ids (expires_ns);
