//! The protocol's byte stream, checked before the protocol library sees it.
//!
//! tower-lsp-server ends its read loop at the first message it cannot decode (bad framing, a body
//! that is not UTF-8 or not JSON-RPC), and the server would then exit as if the editor had gone.
//! So the server reads the editor's stream itself: each frame is split out here, a well-formed one
//! is passed on unchanged, and a malformed one is answered as JSON-RPC says (a parse error, or an
//! invalid request with its id) and logged. The answers join the server's own output between whole
//! frames: the output stream is re-framed by the same reader.

use serde_json::{json, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tower_lsp_server::jsonrpc::{Request, Response};

/// The longest body accepted (a larger `Content-Length` is a framing error, not an allocation).
const MAX_BODY: usize = 256 << 20;

/// One frame of the stream: its body, or why there is none.
#[derive(Debug, PartialEq)]
pub enum Frame {
    Body(Vec<u8>),
    /// A header block without a usable `Content-Length` (the message, if any, is skipped).
    BadHeader(String),
}

/// Reads the next frame; `None` at the end of the stream (a frame cut short ends it too).
pub async fn read_frame<R: AsyncBufRead + Unpin>(input: &mut R) -> std::io::Result<Option<Frame>> {
    let mut length: Option<Result<usize, String>> = None;
    let mut seen_header = false;
    loop {
        let mut line = Vec::new();
        if input.read_until(b'\n', &mut line).await? == 0 {
            return Ok(None);
        }
        // A body shorter than its Content-Length said runs into the next header: resume there.
        let line = match find(&line, b"Content-Length") {
            Some(at) if at > 0 => &line[at..],
            _ => &line[..],
        };
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if !seen_header {
                continue;
            }
            return match length {
                Some(Ok(n)) => {
                    let mut body = vec![0; n];
                    match input.read_exact(&mut body).await {
                        Ok(_) => Ok(Some(Frame::Body(body))),
                        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
                        Err(e) => Err(e),
                    }
                }
                Some(Err(why)) => Ok(Some(Frame::BadHeader(why))),
                None => Ok(Some(Frame::BadHeader("a header block without Content-Length".into()))),
            };
        }
        seen_header = true;
        if let Some((name, value)) = text.split_once(':') {
            if name.trim().eq_ignore_ascii_case("Content-Length") {
                length = Some(match value.trim().parse::<usize>() {
                    Ok(n) if n <= MAX_BODY => Ok(n),
                    Ok(n) => Err(format!("Content-Length {n} is larger than {MAX_BODY}")),
                    Err(_) => Err(format!("Content-Length `{}` is not a length", value.trim())),
                });
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Writes `body` as one frame.
pub async fn write_frame<W: AsyncWrite + Unpin>(output: &mut W, body: &[u8]) -> std::io::Result<()> {
    output.write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes()).await?;
    output.write_all(body).await?;
    output.flush().await
}

/// What to do with a frame from the editor: pass its body on, or answer it with this error.
pub fn check(frame: Frame) -> Result<Vec<u8>, Value> {
    let body = match frame {
        Frame::Body(body) => body,
        Frame::BadHeader(why) => return Err(error_response(Value::Null, -32700, &why)),
    };
    if serde_json::from_slice::<Request>(&body).is_ok() || serde_json::from_slice::<Response>(&body).is_ok() {
        return Ok(body);
    }
    Err(match serde_json::from_slice::<Value>(&body) {
        Ok(value) => {
            let id = value.get("id").filter(|id| id.is_number() || id.is_string()).cloned().unwrap_or(Value::Null);
            error_response(id, -32600, "not a JSON-RPC request, notification or response")
        }
        Err(e) if std::str::from_utf8(&body).is_err() => {
            error_response(Value::Null, -32700, &format!("the message is not UTF-8 ({e})"))
        }
        Err(e) => error_response(Value::Null, -32700, &format!("the message is not JSON: {e}")),
    })
}

fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Copies the editor's frames from `input` to `server` (the protocol library's input), answering the
/// malformed ones through `answers`. Returns at the end of `input`.
pub async fn pump_input<R, W>(mut input: R, mut server: W, answers: mpsc::UnboundedSender<Value>)
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    while let Ok(Some(frame)) = read_frame(&mut input).await {
        match check(frame) {
            Ok(body) => {
                if write_frame(&mut server, &body).await.is_err() {
                    return; // the protocol library has ended (after `exit`)
                }
            }
            Err(answer) => {
                eprintln!("bloatlens-lsp: a malformed message from the editor: {}", answer["error"]["message"]);
                let _ = answers.send(answer);
            }
        }
    }
}

/// Copies the server's frames from `server` to `output`, with the answers to malformed messages
/// in between. Returns when `server` ends (all answers sent before that are written).
pub async fn pump_output<R, W>(mut server: R, mut output: W, mut answers: mpsc::UnboundedReceiver<Value>)
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        tokio::select! {
            frame = read_frame(&mut server) => match frame {
                Ok(Some(Frame::Body(body))) => {
                    if write_frame(&mut output, &body).await.is_err() {
                        return;
                    }
                }
                Ok(Some(Frame::BadHeader(_))) => {}
                Ok(None) | Err(_) => break,
            },
            Some(answer) = answers.recv() => {
                if write_frame(&mut output, answer.to_string().as_bytes()).await.is_err() {
                    return;
                }
            }
        }
    }
    while let Ok(answer) = answers.try_recv() {
        let _ = write_frame(&mut output, answer.to_string().as_bytes()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(bytes: &[u8]) -> Vec<Frame> {
        let mut input = tokio::io::BufReader::new(bytes);
        let mut out = Vec::new();
        while let Some(f) = read_frame(&mut input).await.unwrap() {
            out.push(f);
        }
        out
    }

    fn run<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
    }

    #[test]
    fn frames_are_split_by_their_length_and_garbage_is_skipped_to_the_next_header() {
        let ok = br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
        let mut stream = format!("Content-Length: {}\r\n\r\n", ok.len()).into_bytes();
        stream.extend_from_slice(ok);
        stream.extend_from_slice(b"Content-Length: nine\r\n\r\n{\"a\":1}");
        // A length too short: the rest of the body runs into the next header.
        stream.extend_from_slice(b"Content-Length: 3\r\n\r\n{\"jsonrpc\"");
        stream.extend_from_slice(format!("Content-Length: {}\r\n\r\n", ok.len()).as_bytes());
        stream.extend_from_slice(ok);
        let got = run(frames(&stream));
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[0], Frame::Body(ok.to_vec()));
        assert!(matches!(&got[1], Frame::BadHeader(w) if w.contains("nine")), "{:?}", got[1]);
        assert_eq!(got[2], Frame::Body(b"{\"j".to_vec()));
        assert_eq!(got[3], Frame::Body(ok.to_vec()));
    }

    #[test]
    fn malformed_bodies_are_answered_as_json_rpc_says() {
        let parse = check(Frame::Body(b"{not json".to_vec())).unwrap_err();
        assert_eq!(parse["error"]["code"], -32700);
        assert_eq!(parse["id"], Value::Null);
        let utf8 = check(Frame::Body(vec![b'"', 0xff, 0xfe, b'"'])).unwrap_err();
        assert!(utf8["error"]["message"].as_str().unwrap().contains("UTF-8"), "{utf8}");
        let invalid = check(Frame::Body(br#"{"id": 7, "params": []}"#.to_vec())).unwrap_err();
        assert_eq!((invalid["id"].clone(), invalid["error"]["code"].clone()), (json!(7), json!(-32600)));
        let request = br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#;
        assert_eq!(check(Frame::Body(request.to_vec())).unwrap(), request.to_vec());
    }
}
