package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const fakeCA = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"

// staticBinary builds a tiny static Go program for linux.
func staticBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module tiny\n\ngo 1.22\n")
	write(t, filepath.Join(dir, "main.go"), "package main\n\nfunc main() { println(\"tiny\") }\n")
	out := filepath.Join(dir, "tiny")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=-buildvcs=false", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func options(t *testing.T, bin string) Options {
	t.Helper()
	ca := filepath.Join(t.TempDir(), "ca.crt")
	write(t, ca, fakeCA)
	return Options{Binary: bin, CABundle: ca, Format: "tar", Tag: "registry.example.com/debated:test", Version: "test", Created: time.Unix(1700000000, 0).UTC()}
}

func TestImage(t *testing.T) {
	bin := staticBinary(t)
	o := options(t, bin)
	o.Out = filepath.Join(t.TempDir(), "debated-image.tar")
	img, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(img, o); err != nil {
		t.Fatal(err)
	}
	// Read the tarball back as docker load / crane push would.
	tag, _ := name.NewTag(o.Tag)
	loaded, err := tarball.ImageFromPath(o.Out, &tag)
	if err != nil {
		t.Fatalf("read back the tarball: %v", err)
	}
	// A docker-save tarball keeps the config and layers, not the manifest.
	wantCfg, _ := img.ConfigName()
	if got, _ := loaded.ConfigName(); got != wantCfg {
		t.Errorf("tarball image config %s, built %s", got, wantCfg)
	}
	want, _ := img.Digest()
	checkImage(t, loaded, bin)

	// Same inputs, same digest.
	again, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := again.Digest(); d != want {
		t.Errorf("build is not reproducible: %s then %s", want, d)
	}
}

func TestOCILayout(t *testing.T) {
	bin := staticBinary(t)
	o := options(t, bin)
	o.Format = "oci"
	o.Out = filepath.Join(t.TempDir(), "oci")
	img, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(img, o); err != nil {
		t.Fatal(err)
	}
	idx, err := layout.ImageIndexFromPath(o.Out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "test" {
		t.Fatalf("index %+v", m.Manifests)
	}
	loaded, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	if mt, _ := loaded.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s", mt)
	}
	checkImage(t, loaded, bin)
}

func checkImage(t *testing.T, img v1.Image, bin string) {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", cf.OS, cf.Architecture, runtime.GOARCH)
	}
	if c.User != "65532:65532" {
		t.Errorf("user %q", c.User)
	}
	if !slices.Equal(c.Entrypoint, []string{"/debated"}) || !slices.Equal(c.Cmd, []string{"serve"}) {
		t.Errorf("entrypoint %v cmd %v", c.Entrypoint, c.Cmd)
	}
	if c.WorkingDir != "/data" {
		t.Errorf("workdir %q", c.WorkingDir)
	}
	for _, p := range []string{"50051/tcp", "9090/tcp"} {
		if _, ok := c.ExposedPorts[p]; !ok {
			t.Errorf("port %s not exposed", p)
		}
	}
	for _, e := range []string{"DEBATED_LISTEN=:50051", "DEBATED_DATA_DIR=/data"} {
		if !slices.Contains(c.Env, e) {
			t.Errorf("env %v lacks %s", c.Env, e)
		}
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("want one layer, got %d (%v)", len(layers), err)
	}

	// The files, as a runtime would unpack them.
	wantBin, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*tar.Header{}
	contents := map[string][]byte{}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		h.Name = strings.TrimSuffix(strings.TrimPrefix(h.Name, "/"), "/")
		files[h.Name] = h
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			contents[h.Name] = b
		}
	}
	if h := files["debated"]; h == nil || h.Mode&0o111 == 0 || string(contents["debated"]) != string(wantBin) {
		t.Errorf("/debated missing, not executable or not the binary: %+v", h)
	}
	if string(contents["etc/ssl/certs/ca-certificates.crt"]) != fakeCA {
		t.Errorf("CA bundle missing or altered")
	}
	if h := files["data"]; h == nil || h.Typeflag != tar.TypeDir || h.Uid != 65532 || h.Gid != 65532 {
		t.Errorf("/data must be a directory owned by 65532:65532, got %+v", h)
	}
	if h := files["tmp"]; h == nil || h.Mode&0o1777 != 0o1777 {
		t.Errorf("/tmp must be a sticky world-writable directory, got %+v", h)
	}
	if !containsLine(contents["etc/passwd"], "nonroot:x:65532:65532:") || !containsLine(contents["etc/group"], "nonroot:x:65532:") {
		t.Errorf("passwd/group lack the nonroot user")
	}
	for n := range files {
		if n == "bin" || n == "bin/sh" || n == "usr" {
			t.Errorf("unexpected %s: the image is the binary and its data only", n)
		}
	}
}

func containsLine(b []byte, prefix string) bool {
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func TestRejectsDynamicBinary(t *testing.T) {
	// A binary with an ELF interpreter (any dynamically linked system tool).
	var dyn string
	for _, p := range []string{"/bin/ls", "/usr/bin/env", "/bin/sh"} {
		if _, err := os.Stat(p); err == nil {
			dyn = p
			break
		}
	}
	if dyn == "" {
		t.Skip("no dynamically linked binary on this machine")
	}
	if _, err := checkStatic(dyn); err == nil {
		t.Errorf("%s accepted as static", dyn)
	}
	o := options(t, staticBinary(t))
	o.CABundle = o.Binary // not PEM
	if _, err := Build(o); err == nil {
		t.Errorf("a CA bundle without certificates was accepted")
	}
}
