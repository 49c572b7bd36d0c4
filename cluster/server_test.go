package cluster

// The embedded server authenticates (server.go): users, tokens, nkeys
// and TLS with client certificates, from the settings the client side
// takes; no credential is quoted in an error.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startServerWith starts a server as cfg says (on a free port) for the
// test.
func startServerWith(t *testing.T, cfg ServerConfig) *Server {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	srv, err := StartServerWith(cfg)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	return srv
}

// tryJoin joins srv as cfg says and leaves at once.
func tryJoin(t *testing.T, url string, cfg Config) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg.URL = url
	n, err := Join(ctx, cfg)
	if err == nil {
		n.Close()
	}
	return err
}

func TestEmbeddedServerTakesItsUserOnly(t *testing.T) {
	srv := startServerWith(t, ServerConfig{User: "node", Password: "pw-right"})
	require.NoError(t, tryJoin(t, srv.URL(), Config{Name: "a", User: "node", Password: "pw-right"}))
	assert.Error(t, tryJoin(t, srv.URL(), Config{Name: "b"}), "no credentials")
	err := tryJoin(t, srv.URL(), Config{Name: "c", User: "node", Password: "pw-wrong"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "pw-wrong")
	in := strings.Replace(srv.URL(), "nats://", "nats://node:pw-wrong@", 1)
	err = tryJoin(t, in, Config{Name: "d"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "pw-wrong", "not from the URL either")
}

func TestEmbeddedServerTakesItsToken(t *testing.T) {
	srv := startServerWith(t, ServerConfig{Token: "tok-right"})
	require.NoError(t, tryJoin(t, srv.URL(), Config{Name: "a", Token: "tok-right"}))
	err := tryJoin(t, srv.URL(), Config{Name: "b", Token: "tok-wrong"})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "tok-wrong")
}

func TestEmbeddedServerTakesItsNKey(t *testing.T) {
	dir := t.TempDir()
	seedFile := func(name string) string {
		kp, err := nkeys.CreateUser()
		require.NoError(t, err)
		seed, err := kp.Seed()
		require.NoError(t, err)
		file := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(file, seed, 0o600))
		return file
	}
	mine, other := seedFile("mine.nk"), seedFile("other.nk")
	srv := startServerWith(t, ServerConfig{NKeySeedFile: mine})
	require.NoError(t, tryJoin(t, srv.URL(), Config{Name: "a", NKeySeedFile: mine}))
	assert.Error(t, tryJoin(t, srv.URL(), Config{Name: "b", NKeySeedFile: other}))
	_, err := StartServerWith(ServerConfig{Addr: "127.0.0.1:0", NKeySeedFile: mine, User: "u", Password: "p"})
	assert.ErrorContains(t, err, "not several")
}

// TestEmbeddedServerSpeaksTLS: with a certificate and a CA, the server
// speaks TLS and takes only clients that present a certificate of the CA.
func TestEmbeddedServerSpeaksTLS(t *testing.T) {
	pki := newTestPKI(t)
	srv := startServerWith(t, ServerConfig{CertFile: pki.cert, KeyFile: pki.key, CAFile: pki.ca})
	require.True(t, strings.HasPrefix(srv.URL(), "tls://"), srv.URL())
	require.NoError(t, tryJoin(t, srv.URL(), Config{Name: "a", CAFile: pki.ca, CertFile: pki.cert, KeyFile: pki.key}))
	assert.Error(t, tryJoin(t, srv.URL(), Config{Name: "b", CAFile: pki.ca}), "no client certificate")
}

// testPKI is a CA and one certificate it signed (for 127.0.0.1, server
// and client use), in files.
type testPKI struct{ ca, cert, key string }

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	write := func(name, kind string, der []byte) string {
		file := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
		return file
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "luarun test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	caCert, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "node"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, caCert, &key.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return testPKI{ca: write("ca.pem", "CERTIFICATE", caDER), cert: write("node.pem", "CERTIFICATE", der), key: write("node.key", "EC PRIVATE KEY", keyDER)}
}
