import Foundation
import XCTest

@testable import CognitoClient

/// SigV4 is proven against an independent implementation: botocore's signer, run in Python
/// on the same request, must produce the same Authorization header.
final class SigV4Tests: XCTestCase {
    private func botocoreAuthorization(
        url: String, headers: [(String, String)], body: String, region: String,
        credentials: AWSCredentials, epoch: Int
    ) throws -> String {
        let script = """
            import json, sys, datetime
            import botocore.auth
            from botocore.awsrequest import AWSRequest
            from botocore.credentials import Credentials
            spec = json.load(sys.stdin)
            botocore.auth.get_current_datetime = lambda *a, **k: datetime.datetime.fromtimestamp(spec["epoch"], datetime.timezone.utc).replace(tzinfo=None)
            request = AWSRequest(method="POST", url=spec["url"], data=spec["body"].encode(), headers=dict(spec["headers"]))
            creds = Credentials(spec["key"], spec["secret"], spec.get("token"))
            botocore.auth.SigV4Auth(creds, "cognito-idp", spec["region"]).add_auth(request)
            print(request.headers["Authorization"])
            """
        var spec: [String: Any] = [
            "url": url, "headers": headers.map { [$0.0, $0.1] }, "body": body, "region": region,
            "key": credentials.accessKeyId, "secret": credentials.secretAccessKey, "epoch": epoch,
        ]
        spec["token"] = credentials.sessionToken
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        input.fileHandleForWriting.write(try JSONSerialization.data(withJSONObject: spec))
        try input.fileHandleForWriting.close()
        let result = output.fileHandleForReading.readDataToEndOfFile()
        let problems = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, String(decoding: problems, as: UTF8.self))
        return String(decoding: result, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func check(url: String, credentials: AWSCredentials, region: String = "eu-west-1") throws {
        let body = #"{"UserPoolId":"eu-west-1_AbC123","Username":"mallory"}"#
        let headers = [
            ("Content-Type", "application/x-amz-json-1.1"),
            ("X-Amz-Target", "AWSCognitoIdentityProviderService.AdminUserGlobalSignOut"),
            ("Accept", "application/json"),
        ]
        var request = HTTPRequest(url: url, headers: headers.map { (name: $0.0, value: $0.1) }, body: Data(body.utf8))
        let epoch = 1_763_785_096
        try SigV4Signer(credentials: credentials, region: region).sign(
            &request, date: Date(timeIntervalSince1970: Double(epoch)))
        let ours = request.headers.first { $0.name == "Authorization" }?.value
        let theirs = try botocoreAuthorization(
            url: url, headers: headers, body: body, region: region, credentials: credentials, epoch: epoch)
        XCTAssertEqual(ours, theirs)
        XCTAssertEqual(request.headers.first { $0.name == "X-Amz-Date" }?.value, "20251122T041816Z")
        if let token = credentials.sessionToken {
            XCTAssertEqual(request.headers.first { $0.name == "X-Amz-Security-Token" }?.value, token)
        }
    }

    func testMatchesBotocoreWithLongTermKeys() throws {
        try check(
            url: "https://cognito-idp.eu-west-1.amazonaws.com/",
            credentials: AWSCredentials(
                accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"))
    }

    func testMatchesBotocoreWithSessionToken() throws {
        try check(
            url: "https://cognito-idp.eu-west-1.amazonaws.com/",
            credentials: AWSCredentials(
                accessKeyId: "ASIAEXAMPLE", secretAccessKey: "secret/with+chars",
                sessionToken: "FwoGZXIvYXdzEBYaDH//token+with/slashes=="))
    }

    func testMatchesBotocoreOnLoopbackPort() throws {
        try check(
            url: "http://127.0.0.1:5123/", credentials: AWSCredentials(accessKeyId: "AKID", secretAccessKey: "S"),
            region: "us-east-1")
    }

    func testDifferentSecretGivesDifferentSignature() throws {
        var a = HTTPRequest(url: "https://cognito-idp.eu-west-1.amazonaws.com/", body: Data("{}".utf8))
        var b = a
        let date = Date(timeIntervalSince1970: 1_763_785_096)
        try SigV4Signer(credentials: AWSCredentials(accessKeyId: "K", secretAccessKey: "one"), region: "eu-west-1")
            .sign(&a, date: date)
        try SigV4Signer(credentials: AWSCredentials(accessKeyId: "K", secretAccessKey: "two"), region: "eu-west-1")
            .sign(&b, date: date)
        XCTAssertNotEqual(a.headers.last?.value, b.headers.last?.value)
    }
}
