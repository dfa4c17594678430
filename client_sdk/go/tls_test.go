package utilityd

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	pb "github.com/utilityd/utilityd/client_sdk/go/proto/utilitydv1"
)

// A certificate signed by `ca` (self-signed when ca is nil), written as PEM.
type cert struct {
	tls  tls.Certificate
	x509 *x509.Certificate
	key  *ecdsa.PrivateKey
}

func makeCert(t *testing.T, dir, name string, ca *cert, server bool) *cert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature}
	parent, signer := tmpl, key
	if ca == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	} else {
		parent, signer = ca.x509, ca.key
		if server {
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		} else {
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	parsed, _ := x509.ParseCertificate(der)
	keyDer, _ := x509.MarshalECPrivateKey(key)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDer})
	os.WriteFile(filepath.Join(dir, name+".pem"), certPEM, 0o600)
	os.WriteFile(filepath.Join(dir, name+".key"), keyPEM, 0o600)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return &cert{tls: pair, x509: parsed, key: key}
}

// Mutual TLS: a client with a certificate the server's CA signed decides;
// one without a certificate, or that does not trust the server, cannot.
func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := makeCert(t, dir, "ca", nil, false)
	makeCert(t, dir, "server", ca, true)
	client := makeCert(t, dir, "client", ca, false)
	target := startServer(t, "--tls_cert="+filepath.Join(dir, "server.pem"),
		"--tls_key="+filepath.Join(dir, "server.key"),
		"--tls_client_ca="+filepath.Join(dir, "ca.pem"))
	roots := x509.NewCertPool()
	roots.AddCert(ca.x509)
	req := &pb.DecideRequest{Agents: []*pb.AgentSnapshot{forager("f", 0.9, 0)}}
	decide := func(cfg *tls.Config) error {
		c, err := Connect(Options{Target: target, TLS: cfg, Deadline: 3 * time.Second})
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Decide(context.Background(), req)
		return err
	}
	if err := decide(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{client.tls}}); err != nil {
		t.Errorf("with a client certificate: %v", err)
	}
	if err := decide(&tls.Config{RootCAs: roots}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("without a client certificate: %v, want Unavailable", err)
	}
	if err := decide(&tls.Config{Certificates: []tls.Certificate{client.tls}}); err == nil {
		t.Error("a client that does not trust the server's CA decided")
	}
}
