// CURVE keys as text files, and the aggregator's list of the client keys it accepts.
//
// A CURVE key is 32 bytes, written in ZeroMQ's Z85 form: 40 characters of the Z85 alphabet, each
// group of 5 a base-85 number below 2^32 (libzmq's zmq_z85_decode rules). `trailmap keygen NAME`
// (cli/keygen_command.h) writes two key files:
//
//   NAME.key (mode 0600, the secret: whoever holds it is NAME)
//     # trailmap CURVE key pair "web-1": keep this file secret (mode 0600)
//     name = "web-1"
//     public-key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
//     secret-key = "JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6"
//   NAME.pub (the public half, given to the aggregator's operator)
//     name = "web-1"
//     public-key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"
//
// Grammar of a key file: lines; blank lines and lines starting with '#' are skipped; every other
// line is `KEY = VALUE` with VALUE in double quotes or bare; KEY is one of name, public-key,
// secret-key, each at most once; public-key is required.
//
// The client list (aggregator `clients = FILE`, `--clients FILE`): one key a line,
//
//   # NAME   PUBLIC-KEY                                  RIGHTS        HOSTS
//   web-1    rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7    ingest        web-1
//   loadgen  Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID    ingest        sim-* bench-?
//   ops      =Br3rPl8B)L-=Jq+mnH]4&4-c!9M.RJ}1!WR:#G1    query
//   admin    4TJ@=Dp{JGqpR*y]yu}fs9@yaf.9hm&^vKm&4f?Y    ingest,query  *
//
// NAME is the key's identity (letters, digits, '.', '_', '-'; at most 64): it is the ZAP User-Id,
// and what logs, acks and counters name. Two lines may share a NAME (rolling a key: the old and
// the new public key are both listed for a while); a PUBLIC-KEY appears once. RIGHTS is
// `ingest`, `query` or both, comma separated. HOSTS (required with ingest) are the hosts the key
// may write: exact names or glob patterns of `*` (any run) and `?` (one character).
//
// Errors name the source and line ("clients.txt:3: ...") and say what to do. Value types; pure
// functions but Load*, which read one file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trailmap {

inline constexpr size_t kZ85KeyLength = 40;  // 32 bytes in Z85
inline constexpr size_t kMaxKeyNameLength = 64;

// Z85 (ZeroMQ RFC 32) of `bytes`, whose size must be a multiple of 4.
std::string Z85Encode(std::string_view bytes);
// The bytes of Z85 `text` (size a multiple of 5); InvalidArgument naming the first bad character
// or a group past 2^32.
Result<std::string> Z85Decode(std::string_view text);
// A CURVE key in Z85: exactly 40 characters that decode.
Status ValidateZ85Key(std::string_view key);
// Letters, digits, '.', '_', '-'; 1 to kMaxKeyNameLength characters.
bool IsValidKeyName(std::string_view name);

struct CurveKeyFile {
  std::string name;        // "" when the file names none
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;  // Z85, 40 characters; "" in a .pub file
};

// The key file grammar above. `source` names the text in errors.
Result<CurveKeyFile> ParseCurveKeyFile(std::string_view text, std::string_view source);
// The text ParseCurveKeyFile reads back: the secret only when set, with the warning comment.
std::string FormatCurveKeyFile(const CurveKeyFile& key);
// Reads and parses `path`. NotFound when it is missing; with `need_secret` InvalidArgument when
// it holds no secret-key (a .pub given where a .key is needed), or when it can be read by group
// or others (chmod 600 it).
Result<CurveKeyFile> LoadCurveKeyFile(const std::string& path, bool need_secret);

struct ClientKey {
  std::string name;
  std::string public_key;  // Z85
  bool ingest = false;
  bool query = false;
  std::vector<std::string> hosts;  // names or glob patterns; empty without ingest
  // Whether `host` is one of `hosts` (or matches one of its patterns).
  bool MayWrite(std::string_view host) const;
};

// The client list grammar above; `source` names the text in errors.
Result<std::vector<ClientKey>> ParseClientKeys(std::string_view text, std::string_view source);
Result<std::vector<ClientKey>> LoadClientKeys(const std::string& path);

// What a CURVE client (agent, import, loadgen, CLI, trailmap-query) connects with: its own key
// pair and the aggregators' public key (the aggregators of a cluster share one key pair), or
// plaintext when explicitly asked for (--insecure-plaintext).
struct CurveClient {
  std::string name;        // the client key's name (from its key file), for messages
  std::string public_key;  // Z85
  std::string secret_key;  // Z85
  std::string server_key;  // Z85: the aggregators' public key
  bool plaintext = false;  // --insecure-plaintext: no encryption, no authentication
  bool keyed() const { return !server_key.empty(); }
  // Ok when keyed or plaintext; otherwise InvalidArgument saying how to give keys.
  Status Usable() const;
};

// The flags (or environment: TRAILMAP_KEY, TRAILMAP_SERVER_KEY) of a client: `key_path` its
// own .key, `server_key_path` the aggregators' .pub (or .key). Neither and no plaintext: an
// unusable CurveClient (Usable() says what to give), so programs that never connect need no
// keys. InvalidArgument for half a pair, plaintext together with keys, or a file that does not
// load (the message names the flag's file and line).
Result<CurveClient> ResolveCurveClient(const std::string& key_path,
                                       const std::string& server_key_path, bool plaintext);

// A client's key paths not given by flag or config, from the environment: TRAILMAP_KEY into an
// empty *key_path, TRAILMAP_SERVER_KEY into an empty *server_key_path; nothing with plaintext
// (an exported key must not turn --insecure-plaintext into a usage error).
void ClientKeyPathsFromEnvironment(bool plaintext, std::string* key_path,
                                   std::string* server_key_path);

// The warning every program logs at start with --insecure-plaintext.
inline constexpr char kPlaintextWarning[] =
    "WARNING: --insecure-plaintext: connections are neither encrypted nor authenticated; anyone "
    "who reaches the ports can read and write everything (use keys: trailmap keygen --help)";

// `*` any run of characters, `?` one; everything else literal.
bool GlobMatch(std::string_view pattern, std::string_view text);

}  // namespace trailmap
