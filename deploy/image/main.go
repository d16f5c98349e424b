// Command image builds the debated container image offline, without a Docker
// engine or a base image: one layer on top of scratch with the static debated
// binary, the build machine's CA bundle (for TLS to model APIs and managed
// PostgreSQL), minimal /etc/passwd and /etc/group naming the non-root user
// 65532, and the writable folders /data (owned by 65532) and /tmp.
//
//	go run ./image --binary ../bin/linux/debated --out ../bin/debated-image.tar --tag debated:dev
//	go run ./image --binary ../bin/linux/debated --out ../bin/debated-oci --format oci --tag debated:dev
//
// The tarball is what `docker save` writes (`docker load -i`, `crane push
// FILE REF`, `kind load image-archive`); the OCI layout directory is for
// `crane push`, `skopeo copy oci:DIR docker://REF` and `oras`.
//
// Why not distroless: its base images cannot be fetched on the build
// machines (no registry access), and for a static Go binary distroless/static
// adds only what this layer carries itself: CA certificates, passwd/group
// entries for nonroot (65532), a /tmp, and no shell or package manager.
package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed layout.
const (
	BinaryPath = "/debated"
	CAPath     = "/etc/ssl/certs/ca-certificates.crt" // where Go's crypto/x509 looks first on Linux
	DataDir    = "/data"
	UID        = 65532
	GID        = 65532
	User       = "65532:65532"
	GRPCPort   = "50051/tcp"
	MetricPort = "9090/tcp"
)

// Options say what to build and where to write it.
type Options struct {
	Binary   string    // static linux debated binary
	CABundle string    // PEM bundle copied to CAPath
	Out      string    // output file (format "tar") or directory (format "oci")
	Format   string    // "tar" (docker save) or "oci" (OCI image layout)
	Tag      string    // image reference recorded in the tarball / layout annotation
	Version  string    // org.opencontainers.image.version label
	Created  time.Time // creation time and every file's mtime (reproducible builds)
}

func main() {
	var o Options
	flag.StringVar(&o.Binary, "binary", "", "static linux debated binary (CGO_ENABLED=0 go build -trimpath ./cmd/debated)")
	flag.StringVar(&o.CABundle, "ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "PEM CA bundle to include at "+CAPath)
	flag.StringVar(&o.Out, "out", "", "output: a docker-save tarball (--format tar) or an OCI layout directory (--format oci)")
	flag.StringVar(&o.Format, "format", "tar", "tar or oci")
	flag.StringVar(&o.Tag, "tag", "debated:dev", "image reference to record (docker load tags the image with it)")
	flag.StringVar(&o.Version, "version", "dev", "version label")
	flag.Parse()
	if o.Binary == "" || o.Out == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	// SOURCE_DATE_EPOCH (reproducible-builds.org) fixes the timestamps; the
	// default, the epoch, makes the same inputs give the same digest.
	o.Created = time.Unix(0, 0).UTC()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			fatal(fmt.Errorf("SOURCE_DATE_EPOCH: %w", err))
		}
		o.Created = time.Unix(sec, 0).UTC()
	}
	img, err := Build(o)
	if err != nil {
		fatal(err)
	}
	if err := Write(img, o); err != nil {
		fatal(err)
	}
	d, _ := img.Digest()
	fmt.Printf("wrote %s (%s, %s)\n", o.Out, o.Tag, d)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "image:", err)
	os.Exit(1)
}

// Build makes the image.
func Build(o Options) (v1.Image, error) {
	bin, err := os.ReadFile(o.Binary)
	if err != nil {
		return nil, err
	}
	arch, err := checkStatic(o.Binary)
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(o.CABundle)
	if err != nil {
		return nil, fmt.Errorf("CA bundle: %w", err)
	}
	if !bytes.Contains(ca, []byte("-----BEGIN CERTIFICATE-----")) {
		return nil, fmt.Errorf("CA bundle %s holds no PEM certificate", o.CABundle)
	}
	layerTar, err := rootfs(bin, ca, o.Created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: o.Created},
			CreatedBy: "deploy/image: debated binary, CA bundle, passwd/group, /data, /tmp",
			Comment:   "built offline on scratch",
		},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS = "linux"
	cf.Architecture = arch
	cf.Created = v1.Time{Time: o.Created}
	cf.Config = v1.Config{
		Entrypoint:   []string{BinaryPath},
		Cmd:          []string{"serve"},
		User:         User,
		WorkingDir:   DataDir,
		ExposedPorts: map[string]struct{}{GRPCPort: {}, MetricPort: {}},
		Env: []string{
			"PATH=/",
			"DEBATED_LISTEN=:50051",
			"DEBATED_DATA_DIR=" + DataDir,
		},
		Labels: map[string]string{
			"org.opencontainers.image.title":       "debated",
			"org.opencontainers.image.description": "debated gRPC service (auditable multi-agent debates over evidence)",
			"org.opencontainers.image.version":     o.Version,
			"org.opencontainers.image.base.name":   "scratch",
		},
		StopSignal: "SIGTERM",
	}
	return mutate.ConfigFile(img, cf)
}

// checkStatic refuses a dynamically linked binary (there is no libc in the
// image) and returns the binary's GOARCH.
func checkStatic(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s is not a linux ELF binary: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "", fmt.Errorf("%s is dynamically linked; build it with CGO_ENABLED=0", path)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		return "", fmt.Errorf("%s needs shared libraries %v; build it with CGO_ENABLED=0", path, libs)
	}
	switch f.Machine {
	case elf.EM_X86_64:
		return "amd64", nil
	case elf.EM_AARCH64:
		return "arm64", nil
	case elf.EM_386:
		return "386", nil
	case elf.EM_ARM:
		return "arm", nil
	case elf.EM_PPC64:
		return "ppc64le", nil
	case elf.EM_S390:
		return "s390x", nil
	case elf.EM_RISCV:
		return "riscv64", nil
	}
	return "", fmt.Errorf("%s: unsupported machine %v", path, f.Machine)
}

// rootfs is the image's only layer, as a tar stream.
func rootfs(bin, ca []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64, uid, gid int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, Uid: uid, Gid: gid, ModTime: mtime, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	passwd := "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/data:/sbin/nologin\n"
	group := "root:x:0:\nnonroot:x:65532:\n"
	err := errors.Join(
		dir("etc/", 0o755, 0, 0),
		file("etc/passwd", 0o644, []byte(passwd)),
		file("etc/group", 0o644, []byte(group)),
		dir("etc/ssl/", 0o755, 0, 0),
		dir("etc/ssl/certs/", 0o755, 0, 0),
		file("etc/ssl/certs/ca-certificates.crt", 0o644, ca),
		dir("data/", 0o750, UID, GID),
		dir("tmp/", 0o1777, 0, 0),
		file("debated", 0o755, bin),
		tw.Close(),
	)
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write writes the image as a docker-save tarball or an OCI layout directory.
func Write(img v1.Image, o Options) error {
	ref, err := name.NewTag(o.Tag)
	if err != nil {
		return fmt.Errorf("tag: %w", err)
	}
	switch o.Format {
	case "tar":
		return tarball.WriteToFile(o.Out, ref, img)
	case "oci":
		if err := os.RemoveAll(o.Out); err != nil {
			return err
		}
		p, err := layout.Write(o.Out, empty.Index)
		if err != nil {
			return err
		}
		return p.AppendImage(img, layout.WithAnnotations(map[string]string{
			"org.opencontainers.image.ref.name": ref.TagStr(),
			"io.containerd.image.name":          ref.Name(),
		}))
	}
	return fmt.Errorf("format %q: want tar or oci", o.Format)
}
