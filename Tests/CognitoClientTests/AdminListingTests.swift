import Foundation
import XCTest

@testable import CognitoClient

/// ListUsers, ListUsersInGroup and AdminDisableUser: the shapes of botocore's model, the
/// pagination tokens handed back, the request id kept.
final class AdminListingTests: XCTestCase {
    func testListUsersSendsFilterLimitAndTokenAndReadsTheNextToken() throws {
        let transport = ScriptedTransport([
            .respond(
                HTTPResponse(
                    status: 200, headers: ["content-type": "application/x-amz-json-1.1", "x-amzn-requestid": "req-1"],
                    body: Data(
                        #"{"Users":[{"Username":"a","Enabled":true,"UserStatus":"CONFIRMED","Attributes":[{"Name":"email","Value":"a@x"}]},{"Username":"b"}],"PaginationToken":"next-1"}"#
                            .utf8)))
        ])
        let service = CognitoService(endpoint: "http://127.0.0.1:9/", transport: transport, retryPolicy: .none)
        let page = try service.listUsers(userPoolId: "eu-west-1_P", filter: #"email ^= "c""#, paginationToken: "t0")
        XCTAssertEqual(page.users?.map(\.username), ["a", "b"])
        XCTAssertEqual(page.users?.first, ListedUser(username: "a", enabled: true, userStatus: "CONFIRMED"))
        XCTAssertEqual(page.paginationToken, "next-1")
        XCTAssertEqual(service.lastRequestId, "req-1")
        XCTAssertEqual(transport.operations, ["ListUsers"])
        let body = transport.body(0)
        XCTAssertEqual(body["UserPoolId"] as? String, "eu-west-1_P")
        XCTAssertEqual(body["Filter"] as? String, #"email ^= "c""#)
        XCTAssertEqual(body["PaginationToken"] as? String, "t0")
        XCTAssertEqual(body["Limit"] as? Int, 60)
    }

    func testListUsersInGroupUsesNextToken() throws {
        let transport = ScriptedTransport([ScriptedTransport.json(["Users": [["Username": "m"]]])])
        let service = CognitoService(endpoint: "http://127.0.0.1:9/", transport: transport, retryPolicy: .none)
        let page = try service.listUsersInGroup(userPoolId: "eu-west-1_P", groupName: "g", nextToken: nil)
        XCTAssertEqual(page.users?.map(\.username), ["m"])
        XCTAssertNil(page.nextToken)
        XCTAssertEqual(transport.body(0)["GroupName"] as? String, "g")
        XCTAssertNil(transport.body(0)["NextToken"], "no token on the first page")
    }

    func testAdminDisableUserAndARefusalsRequestId() {
        let transport = ScriptedTransport([
            .respond(
                HTTPResponse(
                    status: 400,
                    headers: [
                        "x-amzn-errortype": "TooManyRequestsException:http://internal", "x-amzn-requestid": "req-9",
                    ],
                    body: Data(#"{"__type":"TooManyRequestsException","message":"Rate exceeded"}"#.utf8)))
        ])
        let service = CognitoService(endpoint: "http://127.0.0.1:9/", transport: transport, retryPolicy: .none)
        XCTAssertThrowsError(try service.adminDisableUser(userPoolId: "eu-west-1_P", username: "u")) { error in
            XCTAssertTrue((error as? CognitoError)?.isThrottling ?? false)
        }
        XCTAssertEqual(transport.operations, ["AdminDisableUser"])
        XCTAssertEqual(service.lastRequestId, "req-9")
    }
}
