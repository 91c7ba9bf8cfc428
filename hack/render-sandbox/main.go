// render-sandbox confines one render tool (kustomize, helm, sops) with the kernel, then becomes it.
//
//	render-sandbox [--read PATH]... [--write PATH]... [--connect PORT]... [--memory BYTES] -- /path/to/tool args...
//	render-sandbox --probe     # prints {"abi":N,"landlock":"enforced"|"unavailable"|"partial"} and exits
//
// Landlock (unprivileged, per process, inherited across execve) allows reading only the --read paths, the
// tool binary and /dev/null; writing only the --write paths; no TCP connect or bind (ABI 4+); no abstract
// unix sockets or signals outside the sandbox (ABI 6+). --connect allows TCP connect to that port only: a chart
// fetch (docs/adr/0041) reaches its repository's port; a render passes none. RLIMIT_AS bounds the address space and
// GOMEMLIMIT (when the environment has none) makes the Go runtime collect before that bound. The
// environment is passed on unchanged: the controller built it from an allow-list (run-tool.ts).
// See docs/adr/0033-render-sandbox-enforced-by-the-kernel.md.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// The Landlock ABI whose rights are asked for; an older kernel gets what it has (best effort), and the
// controller reports the level it found (--probe).
var config = landlock.V7.BestEffort()

// minEnforcedABI: the first ABI that denies TCP connect/bind. Below it, files are still confined but the
// network is not: reported as "partial".
const minEnforcedABI = 4

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--probe" {
		probe()
		return
	}
	var reads, writes []string
	var memory uint64
	var ports []uint16
	args := os.Args[1:]
	for len(args) > 0 && args[0] != "--" {
		if len(args) < 2 {
			fail(2, "%s needs a value", args[0])
		}
		switch args[0] {
		case "--read":
			reads = append(reads, args[1])
		case "--write":
			writes = append(writes, args[1])
		case "--connect":
			n, err := strconv.ParseUint(args[1], 10, 16)
			if err != nil || n == 0 {
				fail(2, "--connect needs a TCP port")
			}
			ports = append(ports, uint16(n))
		case "--memory":
			n, err := strconv.ParseUint(args[1], 10, 64)
			if err != nil || n == 0 {
				fail(2, "--memory needs a positive number of bytes")
			}
			memory = n
		default:
			fail(2, "unknown flag %s", args[0])
		}
		args = args[2:]
	}
	if len(args) < 2 {
		fail(2, "usage: render-sandbox [--read PATH]... [--write PATH]... [--connect PORT]... [--memory BYTES] -- TOOL ARGS...")
	}
	tool, argv := args[1], args[1:]
	if _, err := os.Stat(tool); err != nil {
		fail(127, "%s: not found", tool)
	}

	env := os.Environ()
	if memory > 0 && os.Getenv("GOMEMLIMIT") == "" {
		// a Go heap collected well before the address-space bound (Go reserves address space beyond
		// its heap: arenas, stacks, the binary itself)
		env = append(env, "GOMEMLIMIT="+strconv.FormatUint(memory/4, 10))
	}

	rules := []landlock.Rule{
		landlock.ROFiles(tool),
		landlock.RWFiles("/dev/null").IgnoreIfMissing(),
	}
	for _, p := range reads {
		rules = append(rules, pathRule(p, false))
	}
	for _, p := range writes {
		rules = append(rules, pathRule(p, true))
	}
	// With ABI 4+ every TCP bind and connect is denied, but for a --connect port (connect only, never bind).
	for _, port := range ports {
		rules = append(rules, landlock.ConnectTCP(port))
	}
	fd, flags, err := config.NewRulesetFD(rules...)
	if err != nil {
		fail(126, "building the Landlock ruleset: %v", err)
	}
	if fd >= 0 {
		// enforced on this thread, which then becomes the tool: never unlocked
		runtime.LockOSThread()
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			fail(126, "no_new_privs: %v", err)
		}
		if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
			fail(126, "enforcing the Landlock ruleset: %v", err)
		}
		_ = unix.Close(fd)
	}
	err = execLimited(tool, argv, env, memory)
	// like a shell: 127 not found, 126 not executable
	if err == syscall.ENOENT {
		fail(127, "%s: not found", tool)
	}
	fail(126, "%s: %v", tool, err)
}

// execLimited sets RLIMIT_AS (when memory > 0) and execs the tool, with nothing in between that may allocate.
// The bound is for the tool, not for this launcher: this Go runtime has already reserved most of it (arenas,
// page summaries), and set any earlier, the launcher's own next allocation died with "fatal error: runtime: out
// of memory" about once in 50 renders. So every pointer is made first, and both calls are raw system calls
// (no scheduler, no allocation) on this locked thread.
func execLimited(tool string, argv, env []string, memory uint64) error {
	toolp, err := syscall.BytePtrFromString(tool)
	if err != nil {
		return err
	}
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return err
	}
	envp, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	debug.SetGCPercent(-1)
	if memory > 0 {
		limit := unix.Rlimit{Cur: memory, Max: memory}
		_, _, e := syscall.RawSyscall6(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_AS, uintptr(unsafe.Pointer(&limit)), 0, 0, 0)
		if e != 0 {
			fail(126, "setting RLIMIT_AS: %v", e)
		}
	}
	_, _, e := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(toolp)),
		uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])))
	return e
}

func pathRule(path string, write bool) landlock.Rule {
	info, err := os.Stat(path)
	dir := err != nil || info.IsDir()
	switch {
	case write && dir:
		return landlock.RWDirs(path).IgnoreIfMissing()
	case write:
		return landlock.RWFiles(path).IgnoreIfMissing()
	case dir:
		return landlock.RODirs(path).IgnoreIfMissing()
	default:
		return landlock.ROFiles(path).IgnoreIfMissing()
	}
}

func probe() {
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		abi = 0
	}
	state := "enforced"
	switch {
	case abi < 1:
		state = "unavailable"
	case abi < minEnforcedABI:
		state = "partial"
	}
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"abi": abi, "landlock": state})
}

func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "render-sandbox: "+format+"\n", args...)
	os.Exit(code)
}
