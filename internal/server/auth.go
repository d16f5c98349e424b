package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/debated/debated/internal/debate"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/auth"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// keyPrefix starts every API key, so leaked keys are easy to grep for.
const keyPrefix = "dbk_"

// newAPIKeySecret returns a fresh key string and its SHA-256 hash.
func newAPIKeySecret() (secret string, hash []byte, err error) {
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", nil, err
	}
	secret = keyPrefix + base64.RawURLEncoding.EncodeToString(buf)
	return secret, hashKey(secret), nil
}

func hashKey(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

const adminServicePrefix = "/debated.v1.AdminService/"

// isPublic reports whether a method needs no credential: health checks and
// reflection only.
func isPublic(fullMethod string) bool {
	return strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(fullMethod, "/grpc.reflection.")
}

// authenticate is the auth interceptor's function. AdminService methods take
// the bootstrap admin token; every other method takes a tenant API key,
// whose tenant it puts into the context as the caller's principal.
func (s *Server) authenticate(ctx context.Context) (context.Context, error) {
	method, _ := grpc.Method(ctx)
	token, err := auth.AuthFromMD(ctx, "bearer")
	if err != nil {
		return nil, status.Error(codes.Unauthenticated, "missing credential: send \"authorization: Bearer <key>\"")
	}
	if strings.HasPrefix(method, adminServicePrefix) {
		if s.cfg.AdminToken == "" {
			return nil, status.Error(codes.Unauthenticated, "the admin API is disabled: DEBATED_ADMIN_TOKEN is not set")
		}
		if subtle.ConstantTimeCompare([]byte(token), []byte(s.cfg.AdminToken)) != 1 {
			return nil, status.Error(codes.Unauthenticated, "invalid admin token")
		}
		return ctx, nil
	}
	hash := hashKey(token)
	key, err := s.tenants.APIKeyLookup(ctx, hash)
	if errors.Is(err, debate.ErrNotFound) {
		return nil, status.Error(codes.Unauthenticated, "invalid or revoked API key")
	}
	if err != nil {
		return nil, toStatus(ctx, s.log, err)
	}
	ctx = context.WithValue(ctx, keyHashKey{}, hash)
	return debate.WithPrincipal(ctx, debate.Principal{TenantID: key.TenantID, KeyID: key.ID, Scopes: key.Scopes}), nil
}
